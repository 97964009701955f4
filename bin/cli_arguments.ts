/**
 * The arguments of a `poptfjs` verb: each verb declares its positionals and
 * flags ({@link VerbSpec}); {@link parseVerbArguments} reads the command line
 * against that declaration (node's `parseArgs` splits it) and checks every
 * value — integers, choices (matched in any case), required flags — before
 * any verb loads tfjs. A command line that does not fit is a
 * {@link UsageError} (exit status 2), and {@link verbHelp} prints the
 * declaration as the verb's `--help`.
 */
import { parseArgs } from 'node:util';
import { PoptfjsError } from '../lib/common/errors.js';

/** A flag of a verb: `--name VALUE`, or `--name` alone when it has no `value`. */
export interface FlagSpec {
  readonly name: string;
  /** The value's placeholder in the help (`N`, `DIR`); absent: the flag takes no value. */
  readonly value?: string;
  /** The value is a positive integer. */
  readonly integer?: boolean;
  /** The values the flag takes, matched in any case and given to the verb as written here. */
  readonly choices?: readonly string[];
  /** The flag must be given. */
  readonly required?: boolean;
  /** Its value may start with `--` (`--mpi-args "--tag-output"`): the word after the flag is its value whatever it is. */
  readonly dashedValue?: boolean;
  /** What the flag does, for the help. */
  readonly help: string;
}

/** A positional argument of a verb. */
export interface PositionalSpec {
  readonly name: string;
  readonly required: boolean;
  readonly help: string;
}

/** A verb of the command line (`plan`, `cache ls`): what it takes and what it does. */
export interface VerbSpec {
  /** The verb as typed, subverb included (`cache ls`). */
  readonly name: string;
  /** One line: what the verb does. */
  readonly summary: string;
  readonly positionals: readonly PositionalSpec[];
  readonly flags: readonly FlagSpec[];
  /** The verb runs a command given after `--` (`poptfjs run`). */
  readonly command?: boolean;
  /** More help after the flags. */
  readonly notes?: string;
}

/** A command line that does not fit the verb: `poptfjs` exits with status 2. */
export class UsageError extends PoptfjsError {
  constructor(message: string) {
    super(message, { type: 'usage' });
  }
}

/** The flags that ask for a verb's help instead of running it. */
const HELP_FLAGS = ['--help', '-h'];

/** The verb's usage line: `poptfjs plan <model> --batch B [flags]`. */
export function usageLine(verb: VerbSpec): string {
  const positionals = verb.positionals.map((p) => (p.required ? `<${p.name}>` : `[${p.name}]`));
  const required = verb.flags.filter((f) => f.required).map((f) => `--${f.name} ${f.value}`);
  const optional = verb.flags.some((f) => !f.required) ? ['[flags]'] : [];
  return ['poptfjs', verb.name, ...positionals, ...required, ...optional, ...(verb.command ? ['--', '<command> [args...]'] : [])].join(' ');
}

/** The verb's `--help`: usage, summary, positionals and flags, notes. */
export function verbHelp(verb: VerbSpec): string {
  const rows: Array<[string, string]> = [
    ...verb.positionals.map((p): [string, string] => [`<${p.name}>`, p.help]),
    ...verb.flags.map((f): [string, string] => [`--${f.name}${f.value ? ` ${f.value}` : ''}`, `${f.help}${f.required ? ' (required)' : ''}`]),
    ['--help, -h', 'print this help'],
  ];
  const width = Math.max(...rows.map(([left]) => left.length)) + 2;
  const lines = [`usage: ${usageLine(verb)}`, '', `  ${verb.summary}`, ''];
  for (const [left, right] of rows) {
    const [first, ...rest] = right.split('\n');
    lines.push(`  ${left.padEnd(width)}${first}`, ...rest.map((r) => `  ${' '.repeat(width)}${r}`));
  }
  if (verb.notes) lines.push('', ...verb.notes.split('\n').map((l) => (l ? `  ${l}` : '')));
  return lines.join('\n');
}

/** True if the arguments (before a `--`) ask for help. */
export function asksForHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end < 0 ? args : args.slice(0, end)).some((a) => HELP_FLAGS.includes(a));
}

/** The value of a choice flag as the verb spells it, matched in any case. */
function choiceValue(flag: FlagSpec, value: string): string {
  const chosen = flag.choices!.find((c) => c.toLowerCase() === value.toLowerCase());
  if (chosen === undefined) throw new UsageError(`--${flag.name} takes ${flag.choices!.join(', ')} (in any case), got '${value}'`);
  return chosen;
}

function integerValue(flag: FlagSpec, value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1 || !Number.isSafeInteger(Number(value))) {
    throw new UsageError(`--${flag.name} takes a positive integer, got '${value}'`);
  }
  return Number(value);
}

/** The arguments of a verb, checked against its {@link VerbSpec}. */
export class VerbArguments {
  constructor(
    readonly verb: VerbSpec,
    /** The positional arguments, in order. */
    readonly positionals: readonly string[],
    private readonly values: ReadonlyMap<string, string | number | true>,
    /** The command after `--` (verbs with `command`). */
    readonly command: readonly string[],
  ) {}

  private flag(name: string): FlagSpec {
    const flag = this.verb.flags.find((f) => f.name === name);
    if (!flag) throw new PoptfjsError(`poptfjs ${this.verb.name} has no flag --${name}`, { type: 'internal' });
    return flag;
  }

  /** A flag that takes text or a choice: its value, or undefined when it was not given. */
  string(name: string): string | undefined {
    const flag = this.flag(name);
    if (flag.value === undefined || flag.integer) throw new PoptfjsError(`--${name} is not a text flag`, { type: 'internal' });
    return this.values.get(name) as string | undefined;
  }

  /** A positive-integer flag: its value, or undefined when it was not given. */
  integer(name: string): number | undefined {
    if (!this.flag(name).integer) throw new PoptfjsError(`--${name} is not an integer flag`, { type: 'internal' });
    return this.values.get(name) as number | undefined;
  }

  /** A flag without a value: whether it was given. */
  boolean(name: string): boolean {
    if (this.flag(name).value !== undefined) throw new PoptfjsError(`--${name} takes a value`, { type: 'internal' });
    return this.values.get(name) === true;
  }
}

/**
 * Reads `args` (the command line after the verb) against `verb`: unknown
 * flags, missing values, a value given to a flag that takes none, integers,
 * choices, required flags and positionals are checked here, each a
 * {@link UsageError} naming the flag and what it takes.
 */
// biome-ignore lint/complexity/noExcessiveCognitiveComplexity: one check per rule of the command line (unknown, repeated and valueless flags, values, required flags, positionals), each a usage error, read in the order a user meets them
export function parseVerbArguments(verb: VerbSpec, args: readonly string[]): VerbArguments {
  const end = args.indexOf('--');
  const own = verb.command && end >= 0 ? args.slice(0, end) : [...args];
  const command = verb.command && end >= 0 ? args.slice(end + 1) : [];
  const options = Object.fromEntries(verb.flags.map((f) => [f.name, { type: f.value === undefined ? ('boolean' as const) : ('string' as const) }]));
  const { tokens } = parseArgs({ args: own, options, allowPositionals: true, strict: false, tokens: true });
  const known = verb.flags.map((f) => `--${f.name}`).join(', ');
  const values = new Map<string, string | number | true>();
  const positionals: string[] = [];
  for (const token of tokens) {
    if (token.kind === 'positional') positionals.push(token.value);
    if (token.kind !== 'option') continue;
    const flag = verb.flags.find((f) => f.name === token.name);
    if (!flag) throw new UsageError(`unknown flag '${token.rawName}'; poptfjs ${verb.name} takes ${known || 'no flags'}`);
    if (values.has(flag.name)) throw new UsageError(`--${flag.name} is given twice`);
    if (flag.value === undefined) {
      if (token.value !== undefined) throw new UsageError(`--${flag.name} takes no value, got '${token.value}'`);
      values.set(flag.name, true);
      continue;
    }
    const value = token.value;
    if (value === undefined || (token.inlineValue === false && value.startsWith('--') && !flag.dashedValue))
      throw new UsageError(`--${flag.name} needs a value: --${flag.name} ${flag.value}`);
    values.set(flag.name, flag.integer ? integerValue(flag, value) : flag.choices ? choiceValue(flag, value) : value);
  }
  const missing = verb.flags.find((f) => f.required && !values.has(f.name));
  if (missing) throw new UsageError(`give --${missing.name} ${missing.value}: ${missing.help.split('\n')[0]}`);
  const required = verb.positionals.filter((p) => p.required).length;
  if (positionals.length < required) throw new UsageError(`give the ${verb.positionals[positionals.length]!.name}: ${usageLine(verb)}`);
  if (positionals.length > verb.positionals.length) {
    throw new UsageError(`unexpected argument '${positionals[verb.positionals.length]}'; usage: ${usageLine(verb)}`);
  }
  if (verb.command && command.length === 0) throw new UsageError(`give the command to run after --: ${usageLine(verb)}`);
  return new VerbArguments(verb, positionals, values, command);
}
