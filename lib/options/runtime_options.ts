/**
 * Poplar's runtime options: the option flags a `RuntimeOptions` is made of,
 * which an engine also takes among its options as defaults. A
 * `RuntimeOptions` given to `Engine.prepare` or `Engine.run`, then
 * `POPTFJS_RUNTIME_OPTIONS` (or Poplar's own `POPLAR_RUNTIME_OPTIONS`), a
 * JSON object of strings, override those defaults, in that order.
 *
 * `target.hostSyncTimeout` acts: the device waits at a host sync while the
 * host serves a stream callback, and a callback that keeps it waiting longer
 * than the timeout fails the run. The stream-callback threading options can
 * only take the values that say what this runtime does (callbacks are
 * JavaScript functions, run on the main thread, each when the device needs
 * its transfer, with every input transfer of a step fetched before the step
 * runs); any other value is refused with that reason.
 */
import { environmentOptionFlags, type OptionFlagsSource } from './environment_option_flags.js';
import { optionValueProblem, type OptionValueType } from './engine_option_table.js';

/** One runtime option: its value type, its default, and the values this runtime can honour (all when absent), with why. */
export interface RuntimeOptionSpec {
  readonly type: OptionValueType;
  readonly defaultValue: string;
  /** What it does (for an option that acts) or why it is limited to `only`. */
  readonly effect: string;
  readonly only?: readonly string[];
}

const CALLBACKS_ON_MAIN_THREAD = 'stream callbacks are JavaScript functions, which run on the main thread';

/** Every runtime option, by name. */
export const RUNTIME_OPTIONS: Readonly<Record<string, RuntimeOptionSpec>> = {
  'target.hostSyncTimeout': {
    type: { kind: 'integer' },
    defaultValue: '300',
    effect: 'seconds the device waits at a host sync for a stream callback before the run fails (0: no limit)',
  },
  'streamCallbacks.maxLookahead': {
    type: { kind: 'integerOr', word: 'unlimited' },
    defaultValue: 'unlimited',
    only: ['unlimited'],
    effect: 'the runtime fetches every input transfer of a step before the step runs',
  },
  'streamCallbacks.multiThreadMode': {
    type: { kind: 'choice', values: ['none', 'collaborative', 'dedicated'] },
    defaultValue: 'none',
    only: ['none'],
    effect: CALLBACKS_ON_MAIN_THREAD,
  },
  'streamCallbacks.numWorkerThreads': { type: { kind: 'integerOr', word: 'auto' }, defaultValue: '0', only: ['0'], effect: CALLBACKS_ON_MAIN_THREAD },
  'streamCallbacks.numaAware': { type: { kind: 'boolean' }, defaultValue: 'false', only: ['false'], effect: CALLBACKS_ON_MAIN_THREAD },
};

/** The names of the runtime options. */
export const RUNTIME_OPTION_NAMES: readonly string[] = Object.keys(RUNTIME_OPTIONS);

/** The runtime options a set of option flags holds, as the engine reads them. */
export interface RuntimeSettings {
  /** Seconds a host sync may wait for a stream callback; 0 for no limit. */
  readonly hostSyncTimeout: number;
}

/** An error for a runtime option of `flags` with a bad value (or a value this runtime cannot honour), naming it; `source` names where the flags came from. */
export function checkRuntimeOption(key: string, value: string, source: OptionFlagsSource): void {
  const spec = RUNTIME_OPTIONS[key]!;
  const where = `${source.name}['${key}']`;
  const problem = optionValueProblem(spec.type, value);
  if (problem) throw source.error(`${where} is '${value}'; ${problem}`);
  if (spec.only && !spec.only.includes(value)) throw source.error(`${where} is '${value}', but ${spec.effect}; only ${spec.only.map((v) => `"${v}"`).join(', ')} is possible`);
}

/** The runtime options of `flags` (every key must be a runtime option), checked. */
export function runtimeFlags(flags: Readonly<Record<string, string>>, source: OptionFlagsSource): Record<string, string> {
  for (const [key, value] of Object.entries(flags)) {
    if (!(key in RUNTIME_OPTIONS)) throw source.error(`${source.name}: '${key}' is not a Poplar runtime option; the options are ${RUNTIME_OPTION_NAMES.join(', ')}`);
    checkRuntimeOption(key, value, source);
  }
  return { ...flags };
}

/** The runtime options of the environment (`POPTFJS_RUNTIME_OPTIONS` or `POPLAR_RUNTIME_OPTIONS`), checked; empty when neither is set. */
export function environmentRuntimeFlags(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const given = environmentOptionFlags('POPTFJS_RUNTIME_OPTIONS', 'runtime options', '{"target.hostSyncTimeout":"30"}', env);
  return given ? runtimeFlags(given.options, given.source) : {};
}

/** The settings of layered runtime option flags: each layer over the ones before it, over the defaults. */
export function runtimeSettings(...layers: ReadonlyArray<Readonly<Record<string, string>>>): RuntimeSettings {
  const merged: Record<string, string> = Object.fromEntries(Object.entries(RUNTIME_OPTIONS).map(([key, spec]) => [key, spec.defaultValue]));
  for (const layer of layers) for (const key of RUNTIME_OPTION_NAMES) if (layer[key] !== undefined) merged[key] = layer[key];
  return { hostSyncTimeout: Number(merged['target.hostSyncTimeout']) };
}
