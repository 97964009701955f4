/**
 * Reading the files poptfjs is given (executables, checkpoints, models,
 * config files): only regular files are read, and their size is known before
 * a byte is. A FIFO would block the reader until something writes to it, a
 * device such as /dev/zero or /dev/urandom never ends, and a directory has
 * no bytes: each is refused with an error naming the path and what it is,
 * whether it is named directly or through a symbolic link. The file is
 * opened without blocking (so one swapped for a FIFO after it was looked at
 * does not block either) and checked again through its descriptor; a caller
 * that knows how large the file may be gives the limit, and a larger file is
 * refused before anything is allocated for it.
 */
import { closeSync, constants, fstatSync, openSync, readSync, statSync, type Stats } from 'node:fs';
import { PoptfjsError } from './errors.js';

/** How large a file may be, and what it is called in the error when it is larger. */
export interface FileSizeLimit {
  /** The most bytes the file may have. */
  readonly maxBytes: number;
  /** What the file is, e.g. 'a model.json'. */
  readonly what: string;
}

/** What a file that is not a regular file is, in words. */
export function fileKind(stats: Stats): string {
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a FIFO (named pipe)';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isSocket()) return 'a socket';
  return 'a regular file';
}

/** A file that cannot be read: `cannot read <path>: <reason>`. */
export class UnreadableFileError extends PoptfjsError {
  /** Why the file cannot be read, e.g. 'it is a FIFO (named pipe), not a regular file'. */
  readonly reason: string;

  constructor(path: string, reason: string, cause?: unknown) {
    super(`cannot read ${path}: ${reason}`, { type: 'file', location: path, ...(cause === undefined ? {} : { cause }) });
    this.reason = reason;
  }
}

function readError(path: string, why: string, cause?: unknown): UnreadableFileError {
  return new UnreadableFileError(path, why, cause);
}

function whyUnreadable(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'ENOTDIR') return 'a part of the path is not a directory';
  if (code === 'EACCES') return 'permission denied';
  if (code === 'ELOOP') return 'too many levels of symbolic links';
  return error instanceof Error ? error.message : String(error);
}

function notRegular(path: string, stats: Stats): UnreadableFileError {
  return readError(path, `it is ${fileKind(stats)}, not a regular file`);
}

/**
 * The size of the regular file at `path` (following symbolic links); an
 * error naming the path if there is none or it is something else.
 */
export function regularFileSize(path: string): number {
  let stats: Stats;
  try {
    stats = statSync(path);
  } catch (error) {
    throw readError(path, whyUnreadable(error), error);
  }
  if (!stats.isFile()) throw notRegular(path, stats);
  return stats.size;
}

/**
 * The bytes of the regular file at `path`; an error naming the path if it
 * cannot be read, is not a regular file, or is larger than `limit`.
 */
export function readFileBytes(path: string, limit?: FileSizeLimit): Uint8Array {
  regularFileSize(path);
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw readError(path, whyUnreadable(error), error);
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw notRegular(path, stats);
    if (limit !== undefined && stats.size > limit.maxBytes) {
      throw readError(path, `it has ${stats.size} bytes, more than the ${limit.maxBytes} ${limit.what} may have`);
    }
    const bytes = new Uint8Array(stats.size);
    let read = 0;
    while (read < bytes.length) {
      const n = readSync(fd, bytes, read, bytes.length - read, read);
      if (n === 0) break;
      read += n;
    }
    // A file that shrank while it was read gives what it held; the caller's checks of the content see the rest is missing.
    return read === bytes.length ? bytes : bytes.subarray(0, read);
  } catch (error) {
    if (error instanceof PoptfjsError) throw error;
    throw readError(path, whyUnreadable(error), error);
  } finally {
    closeSync(fd);
  }
}
