/**
 * How many cores other processes keep busy: the machine's busy CPU time
 * (all cores, from the kernel's counters) less this process's own (all its
 * threads), over the wall time between two readings. On a shared machine a
 * thread pool only pays when its threads find idle cores: a kernel handed to
 * threads that must wait for a core waits a scheduler time slice.
 */
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

/** Reads the machine's and this process's CPU times now. */
export function readCpu(): CpuReading {
  const machineBusyMs = cpus().reduce((sum, { times }) => sum + times.user + times.nice + times.sys + times.irq, 0);
  const { user, system } = process.cpuUsage();
  return { wallMs: performance.now(), machineBusyMs, processMs: (user + system) / 1000 };
}

/** The cores other processes kept busy between two readings (0 when no time passed). */
export function coresBusyElsewhere(before: CpuReading, after: CpuReading): number {
  const wall = after.wallMs - before.wallMs;
  if (wall <= 0) return 0;
  return Math.max(0, (after.machineBusyMs - before.machineBusyMs - (after.processMs - before.processMs)) / wall);
}

/** The shortest time over which busy cores are measured (the kernel's counters tick every 10 ms). */
export const MIN_WINDOW_MS = 250;

/**
 * Busy cores elsewhere, measured over the last window of at least
 * {@link MIN_WINDOW_MS}: asked more often, it answers the last measurement.
 */
export class CoresBusyElsewhere {
  private last: CpuReading;
  private busy = 0;

  /** `read` gives the CPU times; `clock` the time in milliseconds, on the clock of their `wallMs`. */
  constructor(
    private readonly read: () => CpuReading = readCpu,
    private readonly clock: () => number = () => performance.now(),
  ) {
    this.last = read();
  }

  /** Cores other processes kept busy over the last completed window (0 before the first). */
  now(): number {
    if (this.clock() - this.last.wallMs >= MIN_WINDOW_MS) {
      const reading = this.read();
      this.busy = coresBusyElsewhere(this.last, reading);
      this.last = reading;
    }
    return this.busy;
  }
}
