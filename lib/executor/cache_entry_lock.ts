/**
 * The lock that lets one process compile a cache entry while the others
 * wait for it: a file `<entry>.lock` created exclusively, holding the
 * holder's process id, host name, creation time and a random token.
 *
 * A lock outlives a holder that crashed; such a lock is stale and the next
 * process reclaims it: the holder is a process of this host that no longer
 * runs, or the lock is older than {@link STALE_LOCK_AGE_MS}. Reclaiming is
 * done by renaming the lock away, so two waiters cannot both reclaim it; in
 * the worst case two processes compile the same entry, which is harmless as
 * entries are written atomically.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { PoptfjsError } from '../errors.js';
import { getLogger } from '../log.js';

const log = getLogger('poptfjs');

/** A lock older than this is stale whoever holds it (a holder never takes this long to compile). */
export const STALE_LOCK_AGE_MS = 10 * 60 * 1000;

/** A lock whose content cannot be read (being written, or cut short by a crash) is stale after this long. */
const UNREADABLE_LOCK_AGE_MS = 10 * 1000;

/** Who holds a lock. */
export interface LockHolder {
  readonly pid: number;
  readonly hostname: string;
  readonly createdUnixMs: number;
  readonly token: string;
}

/** True if process `pid` of this host is running. */
function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The holder written in the lock at `path`; `undefined` if there is no lock, `'unreadable'` if its content cannot be read. */
export function lockHolder(path: string): LockHolder | 'unreadable' | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    return 'unreadable';
  }
  try {
    const holder = JSON.parse(text) as LockHolder;
    const valid = Number.isInteger(holder.pid) && typeof holder.hostname === 'string' && typeof holder.createdUnixMs === 'number' && typeof holder.token === 'string';
    return valid ? holder : 'unreadable';
  } catch {
    return 'unreadable';
  }
}

/** Why the lock at `path` is stale, or undefined while its holder may still be working. */
export function staleReason(path: string, holder: LockHolder | 'unreadable'): string | undefined {
  if (holder === 'unreadable') {
    let age: number;
    try {
      age = Date.now() - statSync(path).mtimeMs;
    } catch {
      return undefined;
    }
    return age > UNREADABLE_LOCK_AGE_MS ? `its content cannot be read and it is ${(age / 1000).toFixed(0)} s old` : undefined;
  }
  if (holder.hostname === hostname() && !processRuns(holder.pid)) return `its holder, process ${holder.pid}, no longer runs`;
  const age = Date.now() - holder.createdUnixMs;
  return age > STALE_LOCK_AGE_MS ? `it is ${(age / 60000).toFixed(0)} min old` : undefined;
}

/** Removes a stale lock by renaming it away first (only one process can), unless it was already replaced. */
function reclaim(path: string, reason: string): void {
  const aside = `${path}.stale.${process.pid}.${randomBytes(6).toString('hex')}`;
  try {
    renameSync(path, aside);
  } catch {
    return;
  }
  rmSync(aside, { force: true });
  log.warn(`reclaimed the stale lock ${path}: ${reason}`);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A lock this process holds. */
export class EntryLock {
  private constructor(
    readonly path: string,
    private readonly token: string,
  ) {}

  /**
   * Takes the lock at `path`, waiting while another process holds it.
   * Returns undefined, without the lock, as soon as `done()` is true (the
   * holder finished the entry).
   */
  static async acquire(path: string, done: () => boolean): Promise<EntryLock | undefined> {
    const token = randomBytes(16).toString('hex');
    let pause = 10;
    let announced = false;
    for (;;) {
      let fd: number | undefined;
      try {
        fd = openSync(path, 'wx', 0o644);
        writeSync(fd, JSON.stringify({ pid: process.pid, hostname: hostname(), createdUnixMs: Date.now(), token } satisfies LockHolder));
        fsyncSync(fd);
        return new EntryLock(path, token);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
          throw new PoptfjsError(`cannot create the lock ${path}: ${error instanceof Error ? error.message : String(error)}`, { type: 'cache', location: path, cause: error });
        }
      } finally {
        if (fd !== undefined) closeSync(fd);
      }
      if (done()) return undefined;
      const holder = lockHolder(path);
      if (holder === undefined) continue;
      const stale = staleReason(path, holder);
      if (stale !== undefined) {
        reclaim(path, stale);
        continue;
      }
      if (!announced) {
        const who = holder === 'unreadable' ? 'another process' : `process ${holder.pid} on ${holder.hostname}`;
        log.info(`waiting for ${who} to finish compiling the cache entry locked by ${path}`);
        announced = true;
      }
      await sleep(pause);
      pause = Math.min(pause * 2, 200);
    }
  }

  /** Releases the lock (if it is still this process's). */
  release(): void {
    const holder = lockHolder(this.path);
    if (holder !== undefined && holder !== 'unreadable' && holder.token === this.token) rmSync(this.path, { force: true });
  }
}
