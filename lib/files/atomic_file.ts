/**
 * Files written so that a reader never sees half of one: the bytes go to a
 * temporary file in the same directory, which is flushed to disk and then
 * renamed over the target (an atomic replacement on POSIX file systems), and
 * the directory is flushed so the rename survives a crash. A process killed
 * at any moment leaves either the old file or the new one, plus at most a
 * stray temporary file named `.<name>.<pid>.<random>.tmp`, where `<pid>` is
 * the writing process. The next write of the same target removes the stray
 * temporary files of writers that no longer run, and
 * {@link temporaryFilesIn} lists them (for `poptfjs cache ls` and `clear`).
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, readdirSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { PoptfjsError } from '../common/errors.js';
import { processRuns } from '../common/process_liveness.js';

/** `.<target name>.<writer pid>.<12 hex digits>.tmp` */
const TEMPORARY_NAME = /^\.(.+)\.(\d+)\.[0-9a-f]{12}\.tmp$/;

/** True for the temporary files {@link writeFileAtomic} leaves behind when killed. */
export function isTemporaryFileName(name: string): boolean {
  return TEMPORARY_NAME.test(name);
}

/** A temporary file of an atomic write, found in a directory. */
export interface TemporaryFile {
  /** Its path. */
  readonly file: string;
  /** The path of the file being written through it. */
  readonly target: string;
  /** The process that writes (or wrote) it. */
  readonly writerPid: number;
  /** False when that process no longer runs: the write was interrupted and the file is left over. */
  readonly writerRuns: boolean;
  /** Its size. */
  readonly bytes: number;
}

/**
 * The temporary files of atomic writes in `dir` (only those writing `target`
 * when given), in name order; none when `dir` cannot be read.
 */
export function temporaryFilesIn(dir: string, target?: string): TemporaryFile[] {
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return [];
  }
  const found: TemporaryFile[] = [];
  for (const name of names) {
    const match = TEMPORARY_NAME.exec(name);
    if (match === null || (target !== undefined && match[1] !== target)) continue;
    const file = join(dir, name);
    let bytes: number;
    try {
      bytes = statSync(file).size;
    } catch {
      continue; // Renamed into place or removed since the directory was read.
    }
    const writerPid = Number(match[2]);
    const writerRuns = writerPid === process.pid || processRuns(writerPid);
    found.push({ file, target: join(dir, match[1] as string), writerPid, writerRuns, bytes });
  }
  return found;
}

/** Removes the temporary files left by writers of `path` that no longer run; they would otherwise pile up. */
function removeLeftoverTemporaryFiles(path: string): void {
  for (const temporary of temporaryFilesIn(dirname(path), basename(path))) {
    if (!temporary.writerRuns) rmSync(temporary.file, { force: true });
  }
}

function fsyncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // Some platforms cannot open or flush a directory; the rename is still atomic there.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Writes `bytes` (or the chunks, one after the other) to `path` atomically
 * (see the module comment); an error names the file and what failed.
 */
export function writeFileAtomic(path: string, bytes: Uint8Array | Iterable<Uint8Array>): void {
  const dir = dirname(path);
  removeLeftoverTemporaryFiles(path);
  const temporary = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  let fd: number | undefined;
  try {
    fd = openSync(temporary, 'wx', 0o644);
    for (const chunk of bytes instanceof Uint8Array ? [bytes] : bytes) {
      let written = 0;
      while (written < chunk.length) written += writeSync(fd, chunk, written, chunk.length - written);
    }
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    renameSync(temporary, path);
  } catch (error) {
    if (fd !== undefined) closeSync(fd);
    rmSync(temporary, { force: true });
    throw new PoptfjsError(`cannot write ${path}: ${describe(error)}`, { type: 'file', location: path, cause: error });
  }
  fsyncDirectory(dir);
}
