/** `poptfjs cache ls|clear [dir]`: the entries of an executable cache directory, listed or removed. */
import { clearExecutableCache, listCacheTemporaryFiles, listExecutableCache } from 'poptfjs';
import { environmentSetting } from '../lib/common/environment.js';
import { UsageError, type VerbArguments } from './cli_arguments.js';

function cacheDirectory(args: VerbArguments): string {
  const chosen = args.positionals[0] ?? environmentSetting('POPTFJS_CACHE_DIR')?.value;
  if (chosen === undefined || chosen === '') throw new UsageError(`give the cache directory (poptfjs ${args.verb.name} <dir>) or set POPTFJS_CACHE_DIR`);
  return chosen;
}

/** `poptfjs cache ls`: one line per entry and per temporary file, then the totals. */
export function cacheLsCommand(args: VerbArguments): number {
  const directory = cacheDirectory(args);
  const entries = listExecutableCache(directory);
  for (const e of entries) {
    const what = 'error' in e.contents ? `unreadable: ${e.contents.error}` : `'${e.contents.modelName}' ${e.contents.kind} (${e.contents.backend})`;
    console.log(`${new Date(e.modifiedUnixMs).toISOString()}  ${String(e.bytes).padStart(10)} B  ${e.file}  ${what}`);
  }
  console.log(`${entries.length} entr${entries.length === 1 ? 'y' : 'ies'}, ${entries.reduce((n, e) => n + e.bytes, 0)} bytes in ${directory}`);
  const temporaries = listCacheTemporaryFiles(directory);
  for (const t of temporaries) {
    const writer = t.writerRuns ? `being written by process ${t.writerPid}` : `left by process ${t.writerPid}, which no longer runs (an interrupted write)`;
    console.log(`${String(t.bytes).padStart(10)} B  ${t.file}  temporary file ${writer}`);
  }
  if (temporaries.length > 0) {
    const bytes = temporaries.reduce((n, t) => n + t.bytes, 0);
    console.log(`${temporaries.length} temporary file(s), ${bytes} bytes; 'poptfjs cache clear' removes those of interrupted writes`);
  }
  return 0;
}

/** `poptfjs cache clear`: removes the entries and the temporary files of interrupted writes, and says what it kept. */
export function cacheClearCommand(args: VerbArguments): number {
  const directory = cacheDirectory(args);
  const result = clearExecutableCache(directory);
  const kept = [
    ...(result.liveLocks > 0 ? [`${result.liveLocks} lock(s) held by running processes`] : []),
    ...(result.liveTemporaryFiles > 0 ? [`${result.liveTemporaryFiles} temporary file(s) being written`] : []),
    ...(result.directories.length > 0 ? [`the director${result.directories.length === 1 ? 'y' : 'ies'} ${result.directories.join(', ')} (not entries)`] : []),
  ];
  const temporaries = result.temporaryFiles > 0 ? ` and ${result.temporaryFiles} temporary file(s) of interrupted writes` : '';
  const live = kept.length > 0 ? `; kept ${kept.join(' and ')}` : '';
  console.log(`removed ${result.entries} entr${result.entries === 1 ? 'y' : 'ies'}${temporaries} (${result.bytes} bytes) from ${directory}${live}`);
  return 0;
}
