/**
 * The lock that lets one process compile a cache entry while the others
 * wait for it: a lock file `<entry>.lock` taken, reclaimed and released as
 * lib/common/lock_file.ts describes (the IPU locks' scheme), so that of
 * processes racing for an entry exactly one holds it at a time, and the lock
 * of a holder that died is reclaimed by one process without ever removing a
 * lock another process has just taken. A cache directory may be shared
 * between hosts: the lock of a holder on another host is stale once it is
 * {@link FOREIGN_LOCK_AGE_MS} old.
 */
import { PoptfjsError } from '../common/errors.js';
import { judgeLock, readLockFile, reclaimLock, releaseLock, sweepLockLeftovers, takeLock, type LockAttempt, type LockPolicy } from '../common/lock_file.js';
import { getLogger } from '../common/log.js';

const log = getLogger('poptfjs');

/** The lock of a holder on another host is stale once this old (a holder never takes this long to compile). */
export const FOREIGN_LOCK_AGE_MS = 10 * 60 * 1000;

const ENTRY_LOCK_POLICY: LockPolicy = { foreignHolderMaxAgeMs: FOREIGN_LOCK_AGE_MS };

/** Directories whose leftovers this process swept. */
const swept = new Set<string>();

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** True if a process holds the lock at `path` (it exists and is not stale). */
export function entryLockHeld(path: string): boolean {
  const lock = readLockFile(path);
  return lock !== undefined && !('stale' in judgeLock(lock, ENTRY_LOCK_POLICY));
}

/**
 * Removes the lock at `path` if it is stale, one process at a time and
 * never one taken meanwhile; true if it is gone (or was never there).
 */
export function removeStaleEntryLock(path: string): boolean {
  const lock = readLockFile(path);
  if (lock === undefined) return true;
  if (!('stale' in judgeLock(lock, ENTRY_LOCK_POLICY))) return false;
  return reclaimLock(path, lock);
}

/** Removes, once per process, what processes killed while taking or reclaiming entry locks left in the cache directory `dir`. */
function sweepOnce(dir: string): void {
  if (swept.has(dir)) return;
  swept.add(dir);
  sweepLockLeftovers(dir);
}

/** A lock this process holds. */
export class EntryLock {
  private constructor(
    readonly path: string,
    private readonly inode: number,
  ) {}

  /**
   * Takes the lock at `path` (in the cache directory `dir`), waiting while
   * another process holds it. Returns undefined, without the lock, as soon
   * as `done()` is true (the holder finished the entry).
   */
  static async acquire(dir: string, path: string, done: () => boolean): Promise<EntryLock | undefined> {
    let pause = 10;
    let announced = false;
    for (;;) {
      let attempt: LockAttempt;
      try {
        sweepOnce(dir);
        attempt = takeLock(path, ENTRY_LOCK_POLICY, (why) => log.warn(`reclaimed the stale lock ${path}: ${why}`));
      } catch (error) {
        throw new PoptfjsError(`cannot create the lock ${path}: ${error instanceof Error ? error.message : String(error)}`, { type: 'cache', location: path, cause: error });
      }
      if ('inode' in attempt) return new EntryLock(path, attempt.inode);
      if (done()) return undefined;
      if (!announced) {
        const { pid, host } = attempt.holder;
        const who = pid === undefined ? 'another process' : `process ${pid}${host !== undefined ? ` on ${host}` : ''}`;
        log.info(`waiting for ${who} to finish compiling the cache entry locked by ${path}`);
        announced = true;
      }
      await sleep(pause);
      pause = Math.min(pause * 2, 200);
    }
  }

  /** Releases the lock (if it is still this process's). */
  release(): void {
    releaseLock(this.path, this.inode);
  }
}
