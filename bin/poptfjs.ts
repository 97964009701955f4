#!/usr/bin/env node
/**
 * The poptfjs command-line tool.
 *
 *   poptfjs env                 the versions and the tfjs backend poptfjs runs on here
 *   poptfjs inspect <file>      what an exported executable or a checkpoint holds
 *   poptfjs cache ls [dir]      the entries of an executable cache directory
 *   poptfjs cache clear [dir]   removes them
 *   poptfjs plan <model.json>   plans a saved model on simulated IPUs, without computing it
 *   poptfjs run ... -- <cmd>    runs <cmd> as several instances of a data-parallel run over MPI
 *   poptfjs help                this text
 */
import { createRequire } from 'node:module';
import { PoptfjsError } from '../lib/common/errors.js';
import { RUN_USAGE, runCommand } from './run_command.js';

const require = createRequire(import.meta.url);

/** The library, loaded only by the commands that use it: `run` starts without loading tfjs. */
const library = () => import('poptfjs');

const USAGE = `usage: poptfjs <command>

commands:
  env                 print the poptfjs and tfjs versions and the backend poptfjs runs on
  inspect <file>      print what an exported executable or a checkpoint holds
                      (version, signature, options, strategy, placement, sizes), without running it
  cache ls [dir]      list the entries of an executable cache directory (default: $POPTFJS_CACHE_DIR)
                      and the temporary files of interrupted writes left in it
  cache clear [dir]   remove the entries of an executable cache directory (default: $POPTFJS_CACHE_DIR)
                      and the temporary files of interrupted writes
  plan <model.json> --batch B [--ipus N] [--replicas R] [--config FILE] ...
                      plan a saved tfjs layers model on simulated IPUs without computing it:
                      memory per IPU, placement and simulated throughput ('poptfjs plan --help')
  run --num-instances N --num-replicas R [...] -- <command> [args...]
                      run <command> as N instances of a data-parallel run through mpiexec,
                      as PopRun does ('poptfjs run --help')
  help                print this text

--verbose (with any command) prints the stack of an error, not only its message`;

function packageVersion(name: string): string {
  try {
    return (require(`${name}/package.json`) as { version: string }).version;
  } catch {
    return 'not installed';
  }
}

async function env(): Promise<void> {
  const { currentBackend, tf } = await library();
  const rows: Array<[string, string]> = [
    ['poptfjs', packageVersion('poptfjs')],
    ['@tensorflow/tfjs', tf.version.tfjs],
    ['@tensorflow/tfjs-node', packageVersion('@tensorflow/tfjs-node')],
    ['backend', currentBackend()],
    ['node', process.versions.node],
  ];
  for (const [k, v] of rows) console.log(`${k.padEnd(22)} ${v}`);
}

async function inspect(file: string | undefined): Promise<void> {
  if (file === undefined) throw new PoptfjsError('inspect: give the file to inspect: poptfjs inspect <file>', { type: 'cli' });
  const { describePoptfjsFile } = await library();
  console.log(describePoptfjsFile(file));
}

function cacheDirectory(dir: string | undefined, what: string): string {
  const chosen = dir ?? process.env.POPTFJS_CACHE_DIR;
  if (chosen === undefined || chosen === '') {
    throw new PoptfjsError(`cache ${what}: give the cache directory (poptfjs cache ${what} <dir>) or set POPTFJS_CACHE_DIR`, { type: 'cli' });
  }
  return chosen;
}

async function cache(action: string | undefined, dir: string | undefined): Promise<void> {
  const { clearExecutableCache, listCacheTemporaryFiles, listExecutableCache } = await library();
  if (action === 'ls') {
    const directory = cacheDirectory(dir, 'ls');
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
  } else if (action === 'clear') {
    const directory = cacheDirectory(dir, 'clear');
    const result = clearExecutableCache(directory);
    const kept = [
      ...(result.liveLocks > 0 ? [`${result.liveLocks} lock(s) held by running processes`] : []),
      ...(result.liveTemporaryFiles > 0 ? [`${result.liveTemporaryFiles} temporary file(s) being written`] : []),
      ...(result.directories.length > 0 ? [`the director${result.directories.length === 1 ? 'y' : 'ies'} ${result.directories.join(', ')} (not entries)`] : []),
    ];
    const temporaries = result.temporaryFiles > 0 ? ` and ${result.temporaryFiles} temporary file(s) of interrupted writes` : '';
    const live = kept.length > 0 ? `; kept ${kept.join(' and ')}` : '';
    console.log(`removed ${result.entries} entr${result.entries === 1 ? 'y' : 'ies'}${temporaries} (${result.bytes} bytes) from ${directory}${live}`);
  } else {
    throw new PoptfjsError(`cache: expected 'ls' or 'clear', got ${action === undefined ? 'nothing' : `'${action}'`}`, { type: 'cli' });
  }
}

const argv = process.argv.slice(2);
/** `--verbose` anywhere before `--` (after it, the arguments are a command's): errors are printed with their stack. */
const separator = argv.includes('--') ? argv.indexOf('--') : argv.length;
const verbose = argv.slice(0, separator).includes('--verbose');
const [command, ...args] = argv.filter((arg, i) => arg !== '--verbose' || i > separator);
/** Runs the command given on the command line. */
async function run(): Promise<void> {
  switch (command) {
    case 'env':
      await env();
      break;
    case 'inspect':
      await inspect(args[0]);
      break;
    case 'cache':
      await cache(args[0], args[1]);
      break;
    case 'plan': {
      const { PLAN_USAGE, planCommand } = await import('./plan_command.js');
      if (args.includes('--help') || args.includes('-h')) console.log(PLAN_USAGE);
      else await planCommand(args);
      break;
    }
    case 'run':
      if (args[0] === '--help' || args[0] === '-h') console.log(RUN_USAGE);
      else process.exitCode = await runCommand(args);
      break;
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      console.log(USAGE);
      break;
    default:
      console.error(`poptfjs: unknown command '${command}'\n${USAGE}`);
      process.exitCode = 2;
  }
}

try {
  await run();
} catch (error) {
  // One line saying what is wrong; the stack only with --verbose (an error that is not poptfjs's says so).
  if (verbose) console.error(`poptfjs: ${error instanceof Error ? error.stack : String(error)}`);
  else if (error instanceof PoptfjsError) console.error(`poptfjs: ${error.message}`);
  else console.error(`poptfjs: ${error instanceof Error ? `${error.name}: ${error.message.split('\n')[0]}` : String(error)} (--verbose prints where it was raised)`);
  process.exitCode = 1;
}
