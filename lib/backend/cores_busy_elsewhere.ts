/**
 * How many cores other processes keep busy while this process computes: the
 * machine's busy CPU time (all cores, from the kernel's counters) less this
 * process's own (all its threads), over the wall time of the intervals in
 * which this process runs large kernels. On a shared machine a thread pool
 * only pays when its threads find idle cores: a kernel handed to threads that
 * must wait for a core waits a scheduler time slice. Another process that
 * computes only while this one waits (a reference stepping in turns, a data
 * loader between steps) takes no core from the pool, and is not counted.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { cpus } from 'node:os';

/** Cumulative CPU times, in milliseconds. */
export interface CpuReading {
  /** When it was read (a monotonic clock). */
  readonly wallMs: number;
  /** CPU time spent outside idle and I/O wait, all cores together, all processes. */
  readonly machineBusyMs: number;
  /** CPU time of this process, all its threads. */
  readonly processMs: number;
}

/**
 * Milliseconds per clock tick of /proc/stat: Linux reports its CPU times in
 * USER_HZ, which is 100 on every architecture (`sysconf(_SC_CLK_TCK)`).
 */
const MS_PER_PROC_STAT_TICK = 10;

/**
 * The machine's busy CPU time from the first line of /proc/stat (`cpu user
 * nice system idle iowait irq softirq steal …`): a read of about 5 µs,
 * where `os.cpus()` also reads every core's model and speed (about 50 µs).
 * Undefined where /proc/stat cannot be read (not Linux).
 */
function procStatReader(): (() => number) | undefined {
  let fd: number;
  try {
    fd = openSync('/proc/stat', 'r');
  } catch {
    return undefined;
  }
  const buffer = Buffer.alloc(256);
  const read = (): number => {
    const length = readSync(fd, buffer, 0, buffer.length, 0);
    const line = buffer.toString('latin1', 0, length).split('\n', 1)[0]!;
    const [, user, nice, system, , , irq, softirq] = line.trim().split(/\s+/).map(Number);
    return (user! + nice! + system! + irq! + softirq!) * MS_PER_PROC_STAT_TICK;
  };
  if (!Number.isFinite(read())) {
    closeSync(fd);
    return undefined;
  }
  return read;
}

/** The machine's busy CPU time from `os.cpus()`, where /proc/stat is not there. */
function osCpusBusyMs(): number {
  return cpus().reduce((sum, { times }) => sum + times.user + times.nice + times.sys + times.irq, 0);
}

let machineBusyMs: (() => number) | undefined;

/** Reads the machine's and this process's CPU times now. */
export function readCpu(): CpuReading {
  machineBusyMs ??= procStatReader() ?? osCpusBusyMs;
  const { user, system } = process.cpuUsage();
  return { wallMs: performance.now(), machineBusyMs: machineBusyMs(), processMs: (user + system) / 1000 };
}

/** The cores other processes kept busy between two readings (0 when no time passed). */
export function coresBusyElsewhere(before: CpuReading, after: CpuReading): number {
  const wall = after.wallMs - before.wallMs;
  if (wall <= 0) return 0;
  return Math.max(0, (after.machineBusyMs - before.machineBusyMs - (after.processMs - before.processMs)) / wall);
}

/**
 * The least computing time over which busy cores are measured: the kernel's
 * counters tick every 10 ms, so each interval's two readings are off by up to
 * a tick a core, which a window of many intervals averages out.
 */
export const MIN_WINDOW_MS = 250;

/** No time yet. */
const ZERO: CpuReading = { wallMs: 0, machineBusyMs: 0, processMs: 0 };

/**
 * Busy cores elsewhere, measured over the intervals between {@link start}
 * and {@link stop} (nested pairs count once) and answered for the last window
 * of at least {@link MIN_WINDOW_MS} of them.
 */
export class CoresBusyElsewhere {
  private busy = 0;
  private depth = 0;
  private opened: CpuReading | undefined;
  /** The current window's sums over its closed intervals, as one reading's differences from zero. */
  private window: CpuReading = ZERO;

  /** `read` gives the CPU times. */
  constructor(private readonly read: () => CpuReading = readCpu) {}

  /** Starts an interval of computing and answers the cores busy elsewhere over the last completed window (0 before the first). */
  start(): number {
    if (this.depth++ === 0) this.opened = this.read();
    return this.busy;
  }

  /** Ends the interval of the matching {@link start}. */
  stop(): void {
    if (this.depth === 0 || --this.depth > 0) return;
    const before = this.opened!;
    const after = this.read();
    this.opened = undefined;
    // Summed before clamping: a tick counted early in one interval is missing from another.
    const window = {
      wallMs: this.window.wallMs + after.wallMs - before.wallMs,
      machineBusyMs: this.window.machineBusyMs + after.machineBusyMs - before.machineBusyMs,
      processMs: this.window.processMs + after.processMs - before.processMs,
    };
    if (window.wallMs < MIN_WINDOW_MS) {
      this.window = window;
      return;
    }
    this.busy = coresBusyElsewhere(ZERO, window);
    this.window = ZERO;
  }
}
