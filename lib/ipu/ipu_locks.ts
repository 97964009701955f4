/**
 * Which process holds which simulated IPU, across the processes of a
 * machine: one lock file per IPU (`ipu-<n>.lock`) in `POPTFJS_IPU_LOCK_DIR`
 * (default `<tmpdir>/poptfjs-ipus`), taken, reclaimed from holders that no
 * longer run and released as lock_file.ts describes, so at most one process
 * holds an IPU at a time. The first lock a process takes in a directory also
 * sweeps what killed processes left there.
 *
 * Within one process, devices attached to the same IPUs share them (counted,
 * released when the last one lets go, and at exit); `DeviceManager` prefers
 * IPUs this process has not attached.
 */
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PoptfjsError } from '../common/errors.js';
import { environmentSetting } from '../common/environment.js';
import { getLogger } from '../common/log.js';
import { judgeLock, readLockFile, releaseLock, sweepLockLeftovers, takeLock, type LockAttempt, type LockPolicy } from '../common/lock_file.js';

const log = getLogger('devicex');

/** IPU locks are taken on this host: a holder another host names is not judged by age. */
const IPU_LOCK_POLICY: LockPolicy = { foreignHolderMaxAgeMs: Number.POSITIVE_INFINITY };

/** The IPUs this process holds: how many devices of the process attached each, and the inode of its lock file. */
const held = new Map<number, { count: number; inode: number }>();
const swept = new Set<string>();
let exitHookInstalled = false;

/** Who holds an IPU in another process, as its lock file says. */
export interface IpuHolder {
  /** The holder's pid. */
  readonly pid: number;
  /** The lock file. */
  readonly lockFile: string;
}

/** The directory of the lock files. */
export function lockDirectory(): string {
  return process.env.POPTFJS_IPU_LOCK_DIR || join(tmpdir(), 'poptfjs-ipus');
}

function lockPath(ipu: number): string {
  return join(lockDirectory(), `ipu-${ipu}.lock`);
}

/** The holder of `ipu` in another process, if any (a stale lock holds nothing). */
export function ipuHolder(ipu: number): IpuHolder | undefined {
  if (held.has(ipu)) return undefined;
  const lockFile = lockPath(ipu);
  const lock = readLockFile(lockFile);
  if (lock === undefined) return undefined;
  const verdict = judgeLock(lock, IPU_LOCK_POLICY);
  return 'stale' in verdict ? undefined : { pid: verdict.pid, lockFile };
}

/** True while a device of this process has `ipu` attached. */
export function attachedHere(ipu: number): boolean {
  return held.has(ipu);
}

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Takes the lock of `ipu` (recorded in `held` with no device yet), or returns who holds it. */
function tryLock(ipu: number): IpuHolder | undefined {
  const dir = lockDirectory();
  mkdirSync(dir, { recursive: true });
  if (!swept.has(dir)) {
    swept.add(dir);
    sweepLockLeftovers(dir);
  }
  const path = lockPath(ipu);
  let attempt: LockAttempt;
  try {
    attempt = takeLock(path, IPU_LOCK_POLICY, (why) => log.info(`reclaimed the lock ${path}: ${why}`));
  } catch (error) {
    throw new PoptfjsError(`cannot create the lock file ${path} of IPU ${ipu}: ${(error as Error).message}`, { type: 'device', location: `IPU ${ipu}` });
  }
  if ('holder' in attempt) return { pid: attempt.holder.pid, lockFile: path };
  held.set(ipu, { count: 0, inode: attempt.inode });
  return undefined;
}

/** Removes the lock of `ipu` if it is still this process's. */
function release(ipu: number, inode: number): void {
  const path = lockPath(ipu);
  if (!releaseLock(path, inode)) log.warn(`the lock ${path} of IPU ${ipu} is no longer this process's; left as it is`);
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const [ipu, { inode }] of held) {
      try {
        release(ipu, inode);
      } catch {
        // The directory is gone: nothing to release.
      }
    }
    held.clear();
  });
}

/** Whether to wait for busy IPUs (`POPTFJS_WAIT_FOR_IPU=1`, or PopTorch's `POPTORCH_WAIT_FOR_IPU=1`) instead of failing. */
export function waitForIpus(): boolean {
  return environmentSetting('POPTFJS_WAIT_FOR_IPU')?.value === '1';
}

/** A busy IPU and who holds it. */
export interface BusyIpu extends IpuHolder {
  readonly ipu: number;
}

/**
 * Takes the IPUs for this process, all or none, without waiting: undefined
 * when it took them, else the first one another process holds (it then
 * holds none it did not hold before).
 */
export function tryLockIpus(ipus: readonly number[]): BusyIpu | undefined {
  installExitHook();
  const taken: number[] = [];
  for (const ipu of ipus) {
    if (held.has(ipu)) continue;
    const holder = tryLock(ipu);
    if (holder !== undefined) {
      for (const t of taken) unlockOne(t, true);
      return { ipu, ...holder };
    }
    taken.push(ipu);
  }
  for (const ipu of ipus) held.get(ipu)!.count++;
  return undefined;
}

/** The error for an IPU another process holds. */
function busyError(busy: BusyIpu): PoptfjsError {
  return new PoptfjsError(`IPU ${busy.ipu} is in use by process ${busy.pid}; detach it there, choose other IPUs, or set POPTFJS_WAIT_FOR_IPU=1 to wait for it`, {
    type: 'device',
    location: `IPU ${busy.ipu}`,
  });
}

/**
 * Takes the IPUs for this process, all or none. Held by another live process:
 * an error naming it, or, with `wait`, waiting until they are free.
 */
export function lockIpus(ipus: readonly number[], wait = waitForIpus()): void {
  for (;;) {
    const busy = tryLockIpus(ipus);
    if (busy === undefined) return;
    if (!wait) throw busyError(busy);
    log.debug(`waiting for IPU ${busy.ipu}, held by process ${busy.pid}`);
    sleep(100);
  }
}

function unlockOne(ipu: number, force = false): void {
  const entry = held.get(ipu);
  if (entry === undefined) return;
  if (!force && entry.count > 1) {
    entry.count--;
    return;
  }
  held.delete(ipu);
  release(ipu, entry.inode);
}

/** Lets go of IPUs taken with {@link lockIpus}. */
export function unlockIpus(ipus: readonly number[]): void {
  for (const ipu of ipus) unlockOne(ipu);
}
