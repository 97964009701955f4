/**
 * Files written so that a reader never sees half of one: the bytes go to a
 * temporary file in the same directory, which is flushed to disk and then
 * renamed over the target (an atomic replacement on POSIX file systems), and
 * the directory is flushed so the rename survives a crash. A process killed
 * at any moment leaves either the old file or the new one, plus at most a
 * stray temporary file (named `.<name>.<pid>.<random>.tmp`).
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { PoptfjsError } from '../errors.js';

/** True for the temporary files {@link writeFileAtomic} leaves behind when killed. */
export function isTemporaryFileName(name: string): boolean {
  return /^\..+\.\d+\.[0-9a-f]{12}\.tmp$/.test(name);
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

/** Writes `bytes` to `path` atomically (see the module comment); an error names the file and what failed. */
export function writeFileAtomic(path: string, bytes: Uint8Array): void {
  const dir = dirname(path);
  const temporary = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  let fd: number | undefined;
  try {
    fd = openSync(temporary, 'wx', 0o644);
    let written = 0;
    while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
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

/** The bytes of `path`; an error that names the file and says why it cannot be read. */
export function readFileBytes(path: string): Uint8Array {
  try {
    return readFileSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : describe(error);
    throw new PoptfjsError(`cannot read ${path}: ${why}`, { type: 'file', location: path, cause: error });
  }
}
