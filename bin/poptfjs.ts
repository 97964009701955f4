#!/usr/bin/env node
/**
 * The poptfjs command-line tool: `poptfjs <verb> [args]` (see {@link VERBS}).
 *
 * The command line is checked against the verb's declaration before the verb
 * loads tfjs. Exit status: 0 when the verb did what it was asked, 1 when it
 * failed (an error it names; `plan`: the model does not fit), 2 for a command
 * line that does not fit the verb. `--help` or `-h` after any verb prints its
 * help, `--version` the version.
 */
import { PoptfjsError } from '../lib/common/errors.js';
import { POPTFJS_VERSION } from '../lib/files/poptfjs_version.js';
import { asksForHelp, parseVerbArguments, UsageError, usageLine, verbHelp, type VerbArguments, type VerbSpec } from './cli_arguments.js';
import { CACHE_CLEAR_VERB, CACHE_LS_VERB, CACHE_VERBS, ENV_VERB, INSPECT_VERB, PLAN_VERB, RUN_VERB, VERBS } from './verbs.js';

/** The help of `poptfjs` itself. */
function mainHelp(): string {
  const width = 'help [command]'.length + 2;
  return [
    'usage: poptfjs <command> [args]',
    '',
    'commands:',
    ...VERBS.map((v) => `  ${v.name.padEnd(width)}${v.summary.split('\n')[0]}`),
    `  ${'help [command]'.padEnd(width)}print this help, or the command's ('poptfjs <command> --help' too)`,
    '',
    `  ${'--version'.padEnd(width)}print the version of poptfjs`,
    `  ${'--verbose'.padEnd(width)}with any command: print an error with its stack, not only its message`,
    '',
    'Exit status: 0 done, 1 failed, 2 a command line that does not fit the command.',
  ].join('\n');
}

/** The help of `poptfjs cache`: its subverbs. */
function cacheHelp(): string {
  return ['usage: poptfjs cache <ls|clear> [dir]', '', ...CACHE_VERBS.map((v) => `  ${usageLine(v).padEnd(32)}${v.summary}`)].join('\n');
}

/** How each verb runs, loaded only once its arguments are checked. */
const RUNNERS = new Map<VerbSpec, (args: VerbArguments) => Promise<number>>([
  [ENV_VERB, async () => (await import('./env_command.js')).envCommand()],
  [INSPECT_VERB, async (args) => (await import('./inspect_command.js')).inspectCommand(args)],
  [CACHE_LS_VERB, async (args) => (await import('./cache_command.js')).cacheLsCommand(args)],
  [CACHE_CLEAR_VERB, async (args) => (await import('./cache_command.js')).cacheClearCommand(args)],
  [PLAN_VERB, async (args) => (await import('./plan_command.js')).planCommand(args)],
  [RUN_VERB, async (args) => (await import('./run_command.js')).runCommand(args)],
]);

/** What a command line asks for: a verb to run with the words after it, or a help text to print. */
type Request = { verb: VerbSpec; rest: readonly string[] } | { help: string };

/** What `words` (the command line after `poptfjs`) ask for; a {@link UsageError} when they name no verb. */
function request(words: readonly string[]): Request {
  const [first, second] = words;
  if (first === undefined) throw new UsageError(`give a command\n${mainHelp()}`);
  if (first === 'help') return words.length === 1 ? { help: mainHelp() } : helpOf(request(words.slice(1)));
  if (asksForHelp([first])) return { help: mainHelp() };
  if (first === 'cache') {
    const sub = CACHE_VERBS.find((v) => v.name === `cache ${second}`);
    if (sub) return { verb: sub, rest: words.slice(2) };
    if (second !== undefined && asksForHelp([second])) return { help: cacheHelp() };
    throw new UsageError(`cache: expected ls or clear, got ${second === undefined ? 'nothing' : `'${second}'`}\n${cacheHelp()}`);
  }
  const verb = VERBS.find((v) => v.name === first);
  if (!verb) throw new UsageError(`unknown command '${first}'\n${mainHelp()}`);
  return { verb, rest: words.slice(1) };
}

/** `poptfjs help <words>`: the help of the verb the words name. */
function helpOf(found: Request): Request {
  return 'help' in found ? found : { help: verbHelp(found.verb) };
}

/** Runs the command line `argv` (after `poptfjs`) and resolves to the exit status. */
async function main(argv: readonly string[]): Promise<number> {
  if (argv[0] === '--version') {
    console.log(POPTFJS_VERSION);
    return 0;
  }
  const found = argv[0] === 'help' && argv[1] === 'cache' && argv.length === 2 ? { help: cacheHelp() } : request(argv);
  if ('help' in found || asksForHelp(found.rest)) {
    console.log('help' in found ? found.help : verbHelp(found.verb));
    return 0;
  }
  const { verb, rest } = found;
  let args: VerbArguments;
  try {
    args = parseVerbArguments(verb, rest);
  } catch (error) {
    if (error instanceof UsageError) throw new UsageError(`${verb.name}: ${error.message}\n(see 'poptfjs ${verb.name} --help')`);
    throw error;
  }
  return RUNNERS.get(verb)!(args);
}

const argv = process.argv.slice(2);
/** `--verbose` anywhere before `--` (after it, the words are a command's): an error is printed with its stack. */
const separator = argv.includes('--') ? argv.indexOf('--') : argv.length;
const verbose = argv.slice(0, separator).includes('--verbose');
try {
  process.exitCode = await main(argv.filter((word, i) => word !== '--verbose' || i > separator));
} catch (error) {
  // One line saying what is wrong; the stack only with --verbose (an error that is not poptfjs's says how to see it).
  if (verbose) console.error(`poptfjs: ${error instanceof Error ? error.stack : String(error)}`);
  else if (error instanceof PoptfjsError) console.error(`poptfjs: ${error.message}`);
  else console.error(`poptfjs: ${error instanceof Error ? `${error.name}: ${error.message.split('\n')[0]}` : String(error)} (--verbose prints where it was raised)`);
  process.exitCode = error instanceof UsageError ? 2 : 1;
}
