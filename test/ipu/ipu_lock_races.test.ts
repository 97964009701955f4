import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, linkSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DeviceManager } from 'poptfjs';
import { ROOT } from '../run_program.js';

/** The lock directory of this file's simulated IPU system (test/own_ipu_system.ts), shared with the processes it starts. */
const lockDir = process.env.POPTFJS_IPU_LOCK_DIR!;

interface Race {
  /** What each process takes: a device id, `any`, or `executor` (see test/fixtures/ipu/race_for_ipu.ts). */
  readonly target: string;
  readonly processes: number;
  readonly holds: number;
  readonly env?: Record<string, string>;
  /** Processes that keep their device at their second hold until they are killed. */
  readonly hangers?: number;
  /** Processes killed at a random moment of the race. */
  readonly randomKills?: number;
  /** Processes that keep their first device until the others have finished. */
  readonly blockers?: number;
}

interface Hold {
  readonly pid: number;
  readonly ipu: number;
  readonly start: bigint;
  readonly end: bigint;
}

interface RaceResult {
  readonly holds: Hold[];
  /** Holds each process that was not killed completed. */
  readonly completed: number[];
  readonly errors: string[];
  /** When the killed processes were killed (hrtime ns, taken before the signal). */
  readonly kills: bigint[];
}

/**
 * Starts the processes, lets them race from the same moment, kills the
 * hangers as they hang and the random victims at random, and collects their
 * holds; a hold a killed process did not end lasts until the kill.
 */
async function race(spec: Race): Promise<RaceResult> {
  const dir = mkdtempSync(join(tmpdir(), 'poptfjs-race-'));
  const goFile = join(dir, 'go');
  const env = { ...process.env, POPTFJS_IPU_LOCK_DIR: lockDir, POPTFJS_WAIT_FOR_IPU: '0', ...spec.env };
  const hangers = spec.hangers ?? 0;
  const victims = spec.randomKills ?? 0;
  const blockers = spec.blockers ?? 0;
  const killedAt = new Map<number, bigint>();
  const racers = Array.from({ length: spec.processes + blockers }, (_, i) => {
    const log = join(dir, `racer-${i}.log`);
    const hangAt = i < hangers ? ['1'] : i >= spec.processes ? ['0'] : [];
    const args = ['--import', 'tsx', 'test/fixtures/ipu/race_for_ipu.ts', spec.target, String(spec.holds), log, goFile, ...hangAt];
    const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
    const kill = () => {
      if (killedAt.has(i) || child.exitCode !== null) return;
      killedAt.set(i, process.hrtime.bigint());
      child.kill('SIGKILL');
    };
    let output = '';
    const ready = new Promise<void>((resolve) => {
      child.stdout!.on('data', (chunk: Buffer) => {
        output += String(chunk);
        if (output.includes('ready')) resolve();
        if (output.includes('hanging') && i < hangers) kill();
      });
    });
    const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
    return { child, log, ready, exited, kill };
  });
  try {
    await Promise.all(racers.map((r) => r.ready));
    writeFileSync(goFile, '');
    racers.slice(hangers, hangers + victims).forEach((r) => setTimeout(r.kill, 100 + Math.random() * 400));
    const racing = racers.slice(0, spec.processes);
    const timeout = new Promise<void>((resolve) => setTimeout(resolve, 20_000));
    await Promise.race([Promise.all(racing.map((r) => r.exited)), timeout]);
    const stuck = racing.filter((r) => r.child.exitCode === null && r.child.signalCode === null).map((r) => r.child.pid);
    expect(stuck, 'processes still waiting for an IPU after 20 s').toEqual([]);
    for (const r of racers.slice(spec.processes)) r.kill();
    await Promise.all(racers.map((r) => r.exited));
  } finally {
    for (const r of racers) if (r.child.exitCode === null) r.child.kill('SIGKILL');
  }
  const result: RaceResult = { holds: [], completed: [], errors: [], kills: [...killedAt.values()] };
  racers.forEach((r, i) => {
    const lines = existsSync(r.log) ? readFileSync(r.log, 'utf8').split('\n').filter(Boolean) : [];
    let open: { ipu: number; start: bigint } | undefined;
    let completed = 0;
    for (const line of lines) {
      const [kind, ipu, time] = line.split(' ');
      if (kind === 'error') result.errors.push(line);
      else if (kind === 'start') open = { ipu: Number(ipu), start: BigInt(time!) };
      else if (kind === 'end' && open) {
        result.holds.push({ pid: r.child.pid!, ...open, end: BigInt(time!) });
        open = undefined;
        completed++;
      }
    }
    // A hold that never ended belongs to a process killed while holding: it held until the kill at least.
    if (open) {
      expect(killedAt.has(i), `process ${i} left a hold open without being killed`).toBe(true);
      result.holds.push({ pid: r.child.pid!, ...open, end: killedAt.get(i)! });
    }
    if (!killedAt.has(i)) result.completed.push(completed);
  });
  return result;
}

/** Pairs of holds of one IPU by two processes at the same time. */
function overlaps(holds: readonly Hold[]): string[] {
  const found: string[] = [];
  const byIpu = new Map<number, Hold[]>();
  for (const h of holds) byIpu.set(h.ipu, [...(byIpu.get(h.ipu) ?? []), h]);
  for (const [ipu, list] of byIpu) {
    list.sort((a, b) => (a.start < b.start ? -1 : 1));
    for (let i = 1; i < list.length; i++) {
      const [a, b] = [list[i - 1]!, list[i]!];
      if (b.start < a.end) found.push(`IPU ${ipu}: process ${b.pid} took it ${Number(a.end - b.start) / 1e6} ms before process ${a.pid} let go`);
    }
  }
  return found;
}

/** The pid of a process that has exited. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '0']).pid!;
}

/** A lock directory of its own, with `files` in it. */
function lockDirWith(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'poptfjs-locks-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

/** Runs `body` with this process's IPU locks in `dir`. */
function inLockDir<T>(dir: string, body: () => T): T {
  process.env.POPTFJS_IPU_LOCK_DIR = dir;
  try {
    return body();
  } finally {
    process.env.POPTFJS_IPU_LOCK_DIR = lockDir;
  }
}

describe('IPU locks between processes', () => {
  it('let one process at a time hold an IPU that ten race for, holders killed while holding included', async () => {
    const result = await race({ target: '5', processes: 10, holds: 6, hangers: 2, randomKills: 1 });
    expect(result.errors).toEqual([]);
    expect(overlaps(result.holds)).toEqual([]);
    // The killed holders' locks were reclaimed: every other process completed its holds, and the IPU was held after each kill.
    expect(result.kills.length).toBeGreaterThanOrEqual(2);
    expect(result.completed).toEqual(Array(10 - result.kills.length).fill(6));
    // The start times are bigints, which Math.max does not take.
    const lastStart = result.holds.reduce((t, h) => (h.start > t ? h.start : t), 0n);
    for (const kill of result.kills) expect(lastStart > kill).toBe(true);
  });

  it('give each executor a free IPU as it chooses it, passing over one another process took, never an error while IPUs are free', async () => {
    const result = await race({ target: 'executor', processes: 9, holds: 6, hangers: 2, randomKills: 1, env: { POPTFJS_NUM_IPUS: '16' } });
    expect(result.errors).toEqual([]);
    expect(overlaps(result.holds)).toEqual([]);
    expect(result.kills.length).toBeGreaterThanOrEqual(2);
    expect(result.completed).toEqual(Array(9 - result.kills.length).fill(6));
  });

  it('with POPTFJS_WAIT_FOR_IPU=1, never make an executor wait for an IPU another process keeps while others are free', async () => {
    const result = await race({ target: 'executor', processes: 6, holds: 4, blockers: 2, env: { POPTFJS_NUM_IPUS: '16', POPTFJS_WAIT_FOR_IPU: '1' } });
    expect(result.errors).toEqual([]);
    expect(overlaps(result.holds)).toEqual([]);
    expect(result.completed).toEqual(Array(6).fill(4));
  });

  it('with POPTFJS_WAIT_FOR_IPU=1, make processes asking for any free IPU wait while none is free, and take the IPU of a killed holder', async () => {
    const result = await race({ target: 'any', processes: 6, holds: 4, hangers: 1, env: { POPTFJS_NUM_IPUS: '2', POPTFJS_WAIT_FOR_IPU: '1' } });
    expect(result.errors).toEqual([]);
    expect(overlaps(result.holds)).toEqual([]);
    expect(result.kills).toHaveLength(1);
    expect(result.completed).toEqual(Array(5).fill(4));
    expect(new Set(result.holds.map((h) => h.ipu))).toEqual(new Set([0, 1]));
  });

  it('reclaim at once a lock that is empty, cannot be parsed or is a FIFO, even one naming a running process: poptfjs never leaves its locks half-written', () => {
    const live = process.ppid;
    const dir = lockDirWith({
      'ipu-0.lock': `{"pid":${live},"sta`,
      'ipu-1.lock': '',
      'ipu-2.lock': 'not a lock',
    });
    execFileSync('mkfifo', [join(dir, 'ipu-3.lock')]);
    inLockDir(dir, () => {
      const manager = new DeviceManager(4);
      const devices = [0, 1, 2, 3].map((ipu) => manager.acquireDeviceById(ipu));
      for (const ipu of [0, 1, 2, 3]) expect(JSON.parse(readFileSync(join(dir, `ipu-${ipu}.lock`), 'utf8')).pid).toBe(process.pid);
      for (const device of devices) device.detach();
      expect(readdirSync(dir)).toEqual([]);
    });
  });

  it('reclaim a lock whose holder died, even when a process died while reclaiming it, and sweep what killed processes left', () => {
    const dead = deadPid();
    const dir = lockDirWith({
      'ipu-0.lock': JSON.stringify({ pid: dead, start: null, token: 'x', since: '' }),
      'ipu-1.lock': JSON.stringify({ pid: dead, start: null, token: 'y', since: '' }),
      [`ipu-1.lock.${dead}.0a1b2c.tmp`]: '{"pid"',
    });
    // A process that pinned the lock of IPU 0 to remove it and was killed before it did.
    linkSync(join(dir, 'ipu-0.lock'), join(dir, `ipu-0.lock.reclaim-${statSync(join(dir, 'ipu-0.lock')).ino}`));
    inLockDir(dir, () => {
      const manager = new DeviceManager(2);
      const first = manager.acquireDeviceById(1);
      expect(existsSync(join(dir, `ipu-1.lock.${dead}.0a1b2c.tmp`))).toBe(false);
      const second = manager.acquireDeviceById(0);
      expect(readdirSync(dir).sort()).toEqual(['ipu-0.lock', 'ipu-1.lock']);
      expect([first, second].map((d) => JSON.parse(readFileSync(join(dir, `ipu-${d.ipus[0]}.lock`), 'utf8')).pid)).toEqual([process.pid, process.pid]);
      first.detach();
      second.detach();
      expect(readdirSync(dir)).toEqual([]);
    });
  });
});
