/**
 * Lock files that at most one process holds at a time, as the IPU locks
 * (ipu_locks.ts) and the executable cache's entry locks use them. A lock
 * file holds its holder's pid, process start time, host name, a token and
 * when it was taken:
 *
 * - It is taken by writing its whole content to a temporary file
 *   (`<lock>.<pid>.<random>.tmp`) and hard-linking that to the lock's name,
 *   which fails if the name exists: a lock is never replaced, and never seen
 *   half-written.
 * - A lock whose holder no longer runs (by pid and start time, a zombie
 *   counting as gone; see process_liveness.ts) is stale; so is the lock of a
 *   holder on another host (a directory shared between hosts) once it is
 *   older than the caller allows. One process at a time removes a stale lock:
 *   it first pins the lock's inode with a second link named after that inode
 *   (`<lock>.reclaim-<inode>`, which only one process can create), checks
 *   that the pinned file is the stale lock it read (inode and content), and
 *   only then unlinks the lock's name. A lock taken in the meantime is never
 *   removed, and the pinned inode cannot be reused by a new lock while the
 *   pin exists.
 * - A lock that cannot be parsed (empty, truncated, or not JSON naming a
 *   holder) is stale at once: poptfjs's own locks are never seen half-written,
 *   so no live holder wrote it.
 * - A process releases only a lock that is still its own (same inode).
 */
import { randomBytes } from 'node:crypto';
import { closeSync, constants, fstatSync, linkSync, openSync, readdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { ownStartTime, processRuns } from './process_liveness.js';

/** A reclaim pin older than this belongs to a process that died while reclaiming (a reclaim takes microseconds); the next reclaimer pins at the next level. */
const RECLAIM_PIN_GRACE_MS = 2_000;

/** A lock file as read through one descriptor: its inode, content and times. */
export interface LockFile {
  readonly inode: number;
  readonly text: string;
  readonly mtimeMs: number;
  readonly ctimeMs: number;
}

/** What a lock says: why it is stale, or the process holding it. */
export type LockVerdict = { readonly stale: string } | { readonly pid: number; readonly host?: string };

/** How to judge locks: how old the lock of a holder on another host may be before it is stale. */
export interface LockPolicy {
  readonly foreignHolderMaxAgeMs: number;
}

const token = randomBytes(8).toString('hex');

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
export function readLockFile(path: string): LockFile | undefined {
  let fd: number;
  try {
    // Without blocking: a FIFO put where a lock should be reads as empty (and is then reclaimed as one).
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
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

/** The holder a lock names: pid, start time and host; undefined when the text is not a lock poptfjs wrote. */
function parseLock(text: string): { pid: number; start?: string | null; host?: string } | undefined {
  let content: { pid?: unknown; start?: unknown; hostname?: unknown };
  try {
    content = JSON.parse(text) as typeof content;
  } catch {
    return undefined;
  }
  if (content === null || typeof content !== 'object') return undefined;
  const startValid = content.start === undefined || content.start === null || typeof content.start === 'string';
  const hostValid = content.hostname === undefined || typeof content.hostname === 'string';
  if (!Number.isInteger(content.pid) || !startValid || !hostValid) return undefined;
  return {
    pid: content.pid as number,
    start: content.start as string | null | undefined,
    ...(content.hostname !== undefined ? { host: content.hostname as string } : {}),
  };
}

/** What `lock` (not one this process holds) says under `policy`. */
export function judgeLock(lock: LockFile, policy: LockPolicy): LockVerdict {
  const holder = parseLock(lock.text);
  if (holder === undefined) {
    const what = lock.text.length === 0 ? 'it is empty' : 'its content cannot be parsed';
    return { stale: `${what}: poptfjs writes its locks whole, so no running holder wrote it` };
  }
  const { pid, start, host } = holder;
  const age = Date.now() - lock.mtimeMs;
  if (host !== undefined && host !== hostname()) {
    return age > policy.foreignHolderMaxAgeMs ? { stale: `its holder, process ${pid} on ${host}, took it ${Math.round(age / 60_000)} min ago` } : { pid, host };
  }
  if (pid === process.pid && (start ?? null) === ownStartTime()) return { stale: 'it names this process, which does not hold it' };
  return processRuns(pid, start) ? { pid } : { stale: `its holder, process ${pid}, no longer runs` };
}

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Removes the stale lock `lock` at `path`, unless another process is
 * removing it or it was replaced: pins its inode with a link only one
 * process can create, checks the pinned file is `lock`, and unlinks `path`.
 * True if this process removed it.
 */
export function reclaimLock(path: string, lock: LockFile): boolean {
  // Pins of this inode left by processes that died while reclaiming it.
  const deadPins: string[] = [];
  for (let level = 0; ; level++) {
    const pin = `${path}.reclaim-${lock.inode}${level === 0 ? '' : `-${level}`}`;
    try {
      linkSync(path, pin);
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return false;
      if (errorCode(error) !== 'EEXIST') throw error;
      const now = readLockFile(path);
      if (now?.inode !== lock.inode) return false;
      // Another process pinned it (a link changes the inode's ctime) and is removing it; if it has not after the grace period, it died doing so.
      if (Date.now() - now.ctimeMs < RECLAIM_PIN_GRACE_MS) {
        sleep(2);
        return false;
      }
      deadPins.push(pin);
      continue;
    }
    try {
      const pinned = readLockFile(pin);
      if (pinned?.inode !== lock.inode || pinned.text !== lock.text) return false;
      unlinkSync(path);
      for (const left of deadPins) unlinkIfPresent(left);
      return true;
    } finally {
      unlinkIfPresent(pin);
    }
  }
}

/**
 * Removes, in `dir`, what processes killed while taking or reclaiming a lock
 * left there: temporary files of writers that no longer run, and reclaim
 * pins of locks that are gone (or were replaced) and are past their grace
 * period.
 */
export function sweepLockLeftovers(dir: string): void {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const temp = /^.+\.lock\.(\d+)\.[0-9a-f]+\.tmp$/.exec(name);
    if (temp && !processRuns(Number(temp[1]))) unlinkIfPresent(path);
    const pin = /^(.+\.lock)\.reclaim-(\d+)(-\d+)?$/.exec(name);
    if (!pin) continue;
    const lock = readLockFile(join(dir, pin[1]!));
    try {
      if (lock?.inode !== Number(pin[2]) && Date.now() - statSync(path).ctimeMs > RECLAIM_PIN_GRACE_MS) unlinkIfPresent(path);
    } catch (error) {
      if (errorCode(error) !== 'ENOENT') throw error;
    }
  }
}

/** The outcome of {@link takeLock}: the inode of the lock taken, or who holds it. */
export type LockAttempt = { readonly inode: number } | { readonly holder: { readonly pid: number; readonly host?: string } };

/**
 * Takes the lock at `path` without waiting, reclaiming a stale one (`onReclaim`
 * is told why); returns its inode, or who holds it.
 */
export function takeLock(path: string, policy: LockPolicy, onReclaim: (why: string) => void): LockAttempt {
  const temp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  writeFileSync(temp, JSON.stringify({ pid: process.pid, start: ownStartTime(), hostname: hostname(), token, since: new Date().toISOString() }), { flag: 'wx' });
  try {
    const inode = statSync(temp).ino;
    for (;;) {
      try {
        linkSync(temp, path);
        return { inode };
      } catch (error) {
        if (errorCode(error) !== 'EEXIST') throw error;
      }
      const lock = readLockFile(path);
      if (lock === undefined) continue;
      const verdict = judgeLock(lock, policy);
      if (!('stale' in verdict)) return { holder: verdict };
      if (reclaimLock(path, lock)) onReclaim(verdict.stale);
    }
  } finally {
    unlinkIfPresent(temp);
  }
}

/** Removes the lock at `path` if it is still the one of `inode`; false if another process's lock is there now. */
export function releaseLock(path: string, inode: number): boolean {
  const lock = readLockFile(path);
  if (lock === undefined) return true;
  if (lock.inode !== inode) return false;
  unlinkIfPresent(path);
  return true;
}
