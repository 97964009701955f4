/**
 * Which process holds which simulated IPU, across the processes of a
 * machine: one lock file per IPU (`ipu-<n>.lock`) in `POPTFJS_IPU_LOCK_DIR`
 * (default `<tmpdir>/poptfjs-ipus`), holding the holder's pid, start time and
 * a random token. At most one process holds an IPU at a time:
 *
 * - A lock is taken by writing its whole content to a temporary file and
 *   hard-linking that to the lock's name, which fails if the name exists: a
 *   lock is never replaced, and never seen half-written.
 * - A lock whose holder no longer runs (by pid and start time) is stale. One
 *   process at a time removes it: it first pins the lock's inode with a second
 *   link named after that inode (`ipu-<n>.lock.reclaim-<inode>`, which only
 *   one process can create), checks that the pinned file is the stale lock it
 *   read (inode and content), and only then unlinks the lock's name. A lock
 *   that appeared in the meantime is never removed, and the pinned inode
 *   cannot be reused by a new lock while the pin exists.
 * - A lock that cannot be parsed (not one poptfjs wrote) is removed only when
 *   it is older than {@link UNREADABLE_LOCK_GRACE_MS} and no running process
 *   named in it wrote it.
 * - A process releases only a lock that is still its own (same inode).
 *
 * Within one process, devices attached to the same IPUs share them (counted,
 * released when the last one lets go, and at exit); `DeviceManager` prefers
 * IPUs this process has not attached.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fstatSync, linkSync, mkdirSync, openSync, readdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PoptfjsError } from '../errors.js';
import { environmentSetting } from '../environment.js';
import { getLogger } from '../log.js';
import { ownStartTime, processRuns } from './process_liveness.js';

/** A lock file that cannot be parsed is left alone for this long (and while a running process named in it may be writing it). */
export const UNREADABLE_LOCK_GRACE_MS = 10_000;

/** A reclaim pin older than this belongs to a process that died while reclaiming (a reclaim takes microseconds); the next reclaimer pins at the next level. */
const RECLAIM_PIN_GRACE_MS = 2_000;

const log = getLogger('devicex');

/** The IPUs this process holds: how many devices of the process attached each, and the inode of its lock file. */
const held = new Map<number, { count: number; inode: number }>();
const token = randomBytes(8).toString('hex');
const swept = new Set<string>();
let exitHookInstalled = false;

/** Who holds an IPU in another process, as its lock file says. */
export interface IpuHolder {
  /** The holder's pid; undefined when the lock file cannot be parsed (yet). */
  readonly pid: number | undefined;
  /** The lock file. */
  readonly lockFile: string;
}

/** A lock file as read through one descriptor: its inode, content and times. */
interface LockFile {
  readonly inode: number;
  readonly text: string;
  readonly mtimeMs: number;
  readonly ctimeMs: number;
}

/** The directory of the lock files. */
export function lockDirectory(): string {
  return process.env.POPTFJS_IPU_LOCK_DIR || join(tmpdir(), 'poptfjs-ipus');
}

function lockPath(ipu: number): string {
  return join(lockDirectory(), `ipu-${ipu}.lock`);
}

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException).code;
}

/** Unlinks `path`; false if it was already gone. */
function unlinkIfPresent(path: string): boolean {
  try {
    unlinkSync(path);
    return true;
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return false;
    throw error;
  }
}

/** The file at `path` (inode and content of the same file), or undefined if there is none. */
function readLock(path: string): LockFile | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const { ino, mtimeMs, ctimeMs } = fstatSync(fd);
    return { inode: ino, text: readFileSync(fd, 'utf8'), mtimeMs, ctimeMs };
  } finally {
    closeSync(fd);
  }
}

/** The holder a lock names: pid and start time, or only a pid found in text that does not parse. */
function parseLock(text: string): { pid: number | undefined; start?: string | null; parsed: boolean } {
  try {
    const content = JSON.parse(text) as { pid?: unknown; start?: unknown };
    if (Number.isInteger(content.pid) && (content.start === undefined || content.start === null || typeof content.start === 'string')) {
      return { pid: content.pid as number, start: content.start as string | null | undefined, parsed: true };
    }
  } catch {
    // Not JSON: look for a pid below.
  }
  const pid = /"pid"\s*:\s*(\d+)/.exec(text)?.[1];
  return { pid: pid === undefined ? undefined : Number(pid), parsed: false };
}

/**
 * What `lock` (of an IPU this process does not hold) says: why it is stale,
 * or the process holding the IPU (its pid undefined when the lock cannot be
 * parsed and names no running process).
 */
function judge(lock: LockFile): { stale: string } | { pid: number | undefined } {
  const { pid, start, parsed } = parseLock(lock.text);
  if (parsed) {
    if (pid === process.pid && (start ?? null) === ownStartTime()) return { stale: 'it names this process, which does not hold it' };
    return processRuns(pid!, start) ? { pid } : { stale: `its holder, process ${pid}, no longer runs` };
  }
  if (pid !== undefined && processRuns(pid)) return { pid };
  const age = Date.now() - lock.mtimeMs;
  if (age < UNREADABLE_LOCK_GRACE_MS) return { pid: undefined };
  return { stale: `its content cannot be parsed, it is ${Math.round(age / 1000)} s old and no running process wrote it` };
}

/** The holder of `ipu` in another process, if any (a stale lock holds nothing). */
export function ipuHolder(ipu: number): IpuHolder | undefined {
  if (held.has(ipu)) return undefined;
  const lockFile = lockPath(ipu);
  const lock = readLock(lockFile);
  if (lock === undefined) return undefined;
  const verdict = judge(lock);
  return 'stale' in verdict ? undefined : { pid: verdict.pid, lockFile };
}

/** True while a device of this process has `ipu` attached. */
export function attachedHere(ipu: number): boolean {
  return held.has(ipu);
}

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Removes the stale lock `lock` at `path`, unless another process is
 * removing it or it was replaced: pins its inode with a link only one
 * process can create, checks the pinned file is `lock`, and unlinks `path`.
 */
function reclaim(path: string, lock: LockFile, why: string): void {
  // Pins of this inode left by processes that died while reclaiming it.
  const deadPins: string[] = [];
  for (let level = 0; ; level++) {
    const pin = `${path}.reclaim-${lock.inode}${level === 0 ? '' : `-${level}`}`;
    try {
      linkSync(path, pin);
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return;
      if (errorCode(error) !== 'EEXIST') throw error;
      const now = readLock(path);
      if (now?.inode !== lock.inode) return;
      // Another process pinned it (a link changes the inode's ctime) and is removing it; if it has not after the grace period, it died doing so.
      if (Date.now() - now.ctimeMs < RECLAIM_PIN_GRACE_MS) {
        sleep(2);
        return;
      }
      deadPins.push(pin);
      continue;
    }
    try {
      const pinned = readLock(pin);
      if (pinned?.inode === lock.inode && pinned.text === lock.text) {
        unlinkSync(path);
        log.info(`reclaimed the lock ${path}: ${why}`);
        for (const left of deadPins) unlinkIfPresent(left);
      }
    } finally {
      unlinkIfPresent(pin);
    }
    return;
  }
}

/**
 * Removes, once per directory and process, what processes killed while
 * taking or reclaiming a lock left there: temporary files of writers that no
 * longer run, and reclaim pins of locks that are gone.
 */
function sweep(dir: string): void {
  if (swept.has(dir)) return;
  swept.add(dir);
  for (const name of readdirSync(dir)) {
    const temp = /^ipu-\d+\.lock\.(\d+)\.[0-9a-f]+\.tmp$/.exec(name);
    if (temp && !processRuns(Number(temp[1]))) unlinkIfPresent(join(dir, name));
    const pin = /^(ipu-\d+\.lock)\.reclaim-(\d+)(-\d+)?$/.exec(name);
    if (!pin) continue;
    const lock = readLock(join(dir, pin[1]!));
    const path = join(dir, name);
    try {
      if (lock?.inode !== Number(pin[2]) && Date.now() - statSync(path).ctimeMs > RECLAIM_PIN_GRACE_MS) unlinkIfPresent(path);
    } catch (error) {
      if (errorCode(error) !== 'ENOENT') throw error;
    }
  }
}

/** Takes the lock of `ipu` (recorded in `held` with no device yet), or returns who holds it. */
function tryLock(ipu: number): IpuHolder | undefined {
  const dir = lockDirectory();
  mkdirSync(dir, { recursive: true });
  sweep(dir);
  const path = lockPath(ipu);
  const temp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  writeFileSync(temp, JSON.stringify({ pid: process.pid, start: ownStartTime(), token, since: new Date().toISOString() }), { flag: 'wx' });
  try {
    const inode = statSync(temp).ino;
    for (;;) {
      try {
        linkSync(temp, path);
        held.set(ipu, { count: 0, inode });
        return undefined;
      } catch (error) {
        if (errorCode(error) !== 'EEXIST') {
          throw new PoptfjsError(`cannot create the lock file ${path} of IPU ${ipu}: ${(error as Error).message}`, { type: 'device', location: `IPU ${ipu}` });
        }
      }
      const lock = readLock(path);
      if (lock === undefined) continue;
      const verdict = judge(lock);
      if (!('stale' in verdict)) return { pid: verdict.pid, lockFile: path };
      reclaim(path, lock, verdict.stale);
    }
  } finally {
    unlinkIfPresent(temp);
  }
}

/** Removes the lock of `ipu` if it is still this process's. */
function release(ipu: number, inode: number): void {
  const path = lockPath(ipu);
  const lock = readLock(path);
  if (lock === undefined) return;
  if (lock.inode === inode) unlinkIfPresent(path);
  else log.warn(`the lock ${path} of IPU ${ipu} is no longer this process's; left as it is`);
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
  const who =
    busy.pid !== undefined
      ? `in use by process ${busy.pid}; detach it there,`
      : `in use: its lock file ${busy.lockFile} cannot be parsed (it is reclaimed once it is ${UNREADABLE_LOCK_GRACE_MS / 1000} s old and no running process wrote it);`;
  return new PoptfjsError(`IPU ${busy.ipu} is ${who} choose other IPUs, or set POPTFJS_WAIT_FOR_IPU=1 to wait for it`, {
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
    log.debug(`waiting for IPU ${busy.ipu}, held by ${busy.pid !== undefined ? `process ${busy.pid}` : busy.lockFile}`);
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
