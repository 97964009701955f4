/**
 * The executable cache: compiling a model looks up its key (see
 * lib/compile/executable_cache_key.ts) first in memory, then, when caching is enabled
 * (`Options.enableExecutableCaching(dir)` or `POPTFJS_CACHE_DIR`), in the
 * cache directory; a hit loads the executable instead of compiling it.
 *
 * On disk an entry is an executable file `<key>.poptfjs`, written atomically.
 * A model served from memory is still stored in the cache directory of the
 * compile that asked for it when that directory lacks the entry (the
 * directory may have changed since the model was first compiled).
 * Several processes compiling the same model at once take turns on the
 * entry's lock (cache_entry_lock.ts): one compiles, the others wait and then
 * load what it wrote. An entry that cannot be read (corrupted, truncated) is
 * discarded with a warning and compiled again (the new entry replaces it).
 * No entry is ever deleted automatically: `poptfjs cache ls|clear` lists and
 * removes entries, and the temporary files of writes that were interrupted
 * (which the next write of the same entry also removes).
 */
import { existsSync, lstatSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { fileKind } from '../common/regular_file.js';
import { join } from 'node:path';
import { PoptfjsError } from '../common/errors.js';
import { getLogger } from '../common/log.js';
import { isTemporaryFileName, type TemporaryFile, temporaryFilesIn } from './atomic_file.js';
import type { Executable } from '../executable/executable.js';
import { readExecutableFile, readExecutableFileAgain, writeExecutableFile, type DecodedExecutableFile, type ExecutableFileContents } from './executable_file.js';
import { sweepLockLeftovers } from '../common/lock_file.js';
import { EntryLock, entryLockHeld, removeStaleEntryLock } from './cache_entry_lock.js';

const log = getLogger('poptfjs');

/** The extension of cache entries. */
export const CACHE_ENTRY_EXTENSION = '.poptfjs';

/** How many executables the in-memory cache keeps (the least recently used go first). */
const MEMORY_ENTRIES = 64;

/** Where an executable came from. */
export type ExecutableSource = 'compiled' | 'memory cache' | 'disk cache';

/** What the cache did so far in this process. */
export interface ExecutableCacheStatistics {
  /** Executables compiled (cache misses). */
  compilations: number;
  /** Executables found in memory. */
  memoryHits: number;
  /** Executables loaded from a cache directory. */
  diskHits: number;
  /** Entries found unreadable (and compiled again). */
  discardedEntries: number;
}

/** The cache of one process. */
export class ExecutableCache {
  /** The entries compiled or loaded in this process (the entry to store in another cache directory). */
  private readonly memory = new Map<string, ExecutableFileContents>();
  /** What the cache did so far. */
  readonly statistics: ExecutableCacheStatistics = { compilations: 0, memoryHits: 0, diskHits: 0, discardedEntries: 0 };
  /**
   * The entry files read last (the least recently read go first), each with the payload its contents were
   * decoded from: another model instance hitting an entry whose bytes are unchanged shares those contents.
   */
  private readonly decoded = new Map<string, DecodedExecutableFile>();

  /**
   * The executable of `keys`: from memory (by `keys.memory`; also stored in
   * `dir`, when given, if that lacks the entry), from `dir` (when given, by
   * `keys.disk`), or made by `compile`, which returns the entry to store (its
   * executable is used).
   */
  async obtain(
    keys: { readonly memory: string; readonly disk: string },
    dir: string | undefined,
    compile: () => ExecutableFileContents,
  ): Promise<{ executable: Executable; source: ExecutableSource }> {
    const key = keys.memory;
    const remembered = this.memory.get(key);
    if (remembered) {
      this.remember(key, remembered);
      this.statistics.memoryHits++;
      if (dir !== undefined && !existsSync(entryPath(dir, keys.disk))) this.storeRemembered(dir, entryPath(dir, keys.disk), remembered);
      return { executable: remembered.executable, source: 'memory cache' };
    }
    if (dir === undefined) return { executable: this.compiled(key, compile()), source: 'compiled' };
    const entry = entryPath(dir, keys.disk);
    const found = this.readEntry(entry);
    if (found) return this.hit(key, found);
    // A discarded entry is not read again unless another process replaces it.
    const discarded = fileStamp(entry);
    const replaced = () => fileStamp(entry) !== discarded;
    let lock: EntryLock | undefined;
    try {
      ensureDirectory(dir);
      lock = await EntryLock.acquire(dir, `${join(dir, keys.disk)}.lock`, replaced);
    } catch (error) {
      if (!(error instanceof PoptfjsError)) throw error;
      log.warn(`the executable cache in ${dir} cannot be used (${error.message}); compiling without it`);
      return { executable: this.compiled(key, compile()), source: 'compiled' };
    }
    try {
      const written = replaced() ? this.readEntry(entry) : undefined;
      if (written) return this.hit(key, written);
      const contents = compile();
      store(entry, contents);
      return { executable: this.compiled(key, contents), source: 'compiled' };
    } finally {
      lock?.release();
    }
  }

  /** Writes a remembered entry into the cache directory `dir`, or warns that it cannot. */
  private storeRemembered(dir: string, entry: string, contents: ExecutableFileContents): void {
    try {
      ensureDirectory(dir);
    } catch (error) {
      if (!(error instanceof PoptfjsError)) throw error;
      log.warn(`the executable cache in ${dir} cannot be used (${error.message}); the executable is not stored there`);
      return;
    }
    store(entry, contents);
  }

  private compiled(key: string, contents: ExecutableFileContents): Executable {
    this.statistics.compilations++;
    this.remember(key, contents);
    return contents.executable;
  }

  private hit(key: string, contents: ExecutableFileContents): { executable: Executable; source: ExecutableSource } {
    this.statistics.diskHits++;
    this.remember(key, contents);
    return { executable: contents.executable, source: 'disk cache' };
  }

  private remember(key: string, contents: ExecutableFileContents): void {
    this.memory.delete(key);
    this.memory.set(key, contents);
    if (this.memory.size > MEMORY_ENTRIES) this.memory.delete(this.memory.keys().next().value!);
  }

  /** The contents of a cache entry, or undefined if there is none or it cannot be read (then a warning). */
  private readEntry(entry: string): ExecutableFileContents | undefined {
    if (!existsSync(entry)) return undefined;
    const previous = this.decoded.get(entry);
    this.decoded.delete(entry);
    try {
      const read = readExecutableFileAgain(entry, previous);
      this.decoded.set(entry, read);
      if (this.decoded.size > MEMORY_ENTRIES) this.decoded.delete(this.decoded.keys().next().value!);
      return read.contents;
    } catch (error) {
      if (!(error instanceof PoptfjsError)) throw error;
      this.statistics.discardedEntries++;
      log.warn(`discarding the executable cache entry ${entry}, which cannot be used (${error.message}); compiling again`);
      return undefined;
    }
  }
}

/** Writes the cache entry `entry`, or warns that it cannot (the executable is then used without being cached). */
function store(entry: string, contents: ExecutableFileContents): void {
  try {
    writeExecutableFile(entry, contents);
    log.info(`stored the executable of '${contents.executable.modelName}' in the cache: ${entry}`);
  } catch (error) {
    if (!(error instanceof PoptfjsError)) throw error;
    log.warn(`the executable could not be stored in the cache (${error.message}); it is used without being cached`);
  }
}

/** The cache every executor of this process uses. */
export const executableCache = new ExecutableCache();

/** What the executable cache did so far in this process: compilations, hits in memory and on disk, discarded entries. */
export function executableCacheStatistics(): ExecutableCacheStatistics {
  return { ...executableCache.statistics };
}

/** The size and modification time of a file, or '' if there is none. */
function fileStamp(path: string): string {
  try {
    const stat = statSync(path);
    return `${stat.size}:${stat.mtimeMs}:${stat.ino}`;
  } catch {
    return '';
  }
}

/** The file of the entry `key` in `dir`. */
export function entryPath(dir: string, key: string): string {
  return join(dir, `${key}${CACHE_ENTRY_EXTENSION}`);
}

function ensureDirectory(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true });
  } catch (error) {
    throw new PoptfjsError(`cannot create the executable cache directory ${dir}: ${error instanceof Error ? error.message : String(error)}`, {
      type: 'cache',
      location: dir,
      cause: error,
    });
  }
}

/** One entry of a cache directory, as `poptfjs cache ls` shows it. */
export interface CacheEntryInfo {
  readonly file: string;
  readonly bytes: number;
  readonly modifiedUnixMs: number;
  /** What the entry holds, or why it cannot be read. */
  readonly contents: { modelName: string; kind: string; backend: string } | { error: string };
}

function directoryFiles(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new PoptfjsError(
      `cannot read the executable cache directory ${dir}: ${code === 'ENOENT' ? 'no such directory' : error instanceof Error ? error.message : String(error)}`,
      {
        type: 'cache',
        location: dir,
        cause: error,
      },
    );
  }
}

/** The size and modification time of `file` (of its target when it is a link), and what it is when it is not a regular file. */
function entryStats(file: string): { bytes: number; modifiedUnixMs: number; notAFile?: string } {
  const link = lstatSync(file);
  let stats = link;
  if (link.isSymbolicLink()) {
    try {
      stats = statSync(file);
    } catch {
      return { bytes: 0, modifiedUnixMs: link.mtimeMs, notAFile: 'a symbolic link to nothing' };
    }
  }
  return { bytes: stats.size, modifiedUnixMs: stats.mtimeMs, ...(stats.isFile() ? {} : { notAFile: fileKind(stats) }) };
}

/**
 * The entries of the cache directory `dir`: what each holds, or why it
 * cannot be read (a corrupted file, or something that is not a file, such
 * as a directory or a link to nothing, which is never read).
 */
export function listExecutableCache(dir: string): CacheEntryInfo[] {
  return directoryFiles(dir)
    .filter((name) => name.endsWith(CACHE_ENTRY_EXTENSION) && !isTemporaryFileName(name))
    .flatMap((name) => {
      const file = join(dir, name);
      let stats: ReturnType<typeof entryStats>;
      try {
        stats = entryStats(file);
      } catch {
        return []; // Removed since the directory was read.
      }
      let contents: CacheEntryInfo['contents'];
      if (stats.notAFile !== undefined) contents = { error: `it is ${stats.notAFile}, not a regular file` };
      else {
        try {
          const { executable, backend } = readExecutableFile(file);
          contents = { modelName: executable.modelName, kind: executable.kind, backend };
        } catch (error) {
          contents = { error: error instanceof Error ? error.message : String(error) };
        }
      }
      return [{ file, bytes: stats.bytes, modifiedUnixMs: stats.modifiedUnixMs, contents }];
    });
}

/**
 * The temporary files of writes in the cache directory `dir`: left over by
 * writers that were killed (`writerRuns` false), or being written.
 */
export function listCacheTemporaryFiles(dir: string): TemporaryFile[] {
  return temporaryFilesIn(dir);
}

/** What clearing a cache directory removed. */
export interface CacheClearResult {
  /** Entries removed. */
  readonly entries: number;
  /** Temporary files of interrupted writes removed. */
  readonly temporaryFiles: number;
  /** Bytes freed (entries and leftovers). */
  readonly bytes: number;
  /** Locks kept because a live process holds them. */
  readonly liveLocks: number;
  /** Temporary files kept because a live process is writing them. */
  readonly liveTemporaryFiles: number;
  /** Directories named like entries, kept: poptfjs writes files only, so a directory is someone else's. */
  readonly directories: readonly string[];
}

/**
 * Removes the entries of the cache directory `dir`, the temporary files of
 * writers that were killed, and the locks of holders that are gone (a live
 * holder's lock and a live writer's temporary file are kept). Other files, and
 * directories named like entries, are left alone; a link named like an entry is
 * removed, not what it links to.
 */
export function clearExecutableCache(dir: string): CacheClearResult {
  let entries = 0;
  let temporaryFiles = 0;
  let bytes = 0;
  let liveLocks = 0;
  const directories: string[] = [];
  const names = directoryFiles(dir);
  // Read after the names, so that it covers every temporary file among them.
  const written = new Set(
    listCacheTemporaryFiles(dir)
      .filter((temporary) => temporary.writerRuns)
      .map((temporary) => temporary.file),
  );
  sweepLockLeftovers(dir);
  for (const name of names) {
    const file = join(dir, name);
    const isTemporary = isTemporaryFileName(name);
    const isEntry = name.endsWith(CACHE_ENTRY_EXTENSION) && !isTemporary;
    if (written.has(file) || !(isEntry || isTemporary || name.endsWith('.lock'))) continue;
    let size: number;
    try {
      const stats = lstatSync(file);
      if (stats.isDirectory()) {
        directories.push(file);
        continue;
      }
      size = stats.isFile() ? stats.size : 0; // A link is removed, not what it links to.
    } catch {
      continue;
    }
    if (isEntry || isTemporary) rmSync(file, { force: true });
    else if (entryLockHeld(file)) {
      liveLocks++;
      continue;
    } else removeStaleEntryLock(file);
    bytes += size;
    if (isEntry) entries++;
    if (isTemporary) temporaryFiles++;
  }
  return { entries, temporaryFiles, bytes, liveLocks, liveTemporaryFiles: written.size, directories };
}
