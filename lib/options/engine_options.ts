/**
 * Poplar engine options — PopART's `SessionOptions.engineOptions`, an
 * `Engine`'s and `compileGraph`'s options, and for every executor
 * `POPTFJS_ENGINE_OPTIONS` (or Poplar's own `POPLAR_ENGINE_OPTIONS`) — read
 * as the simulated engine understands them. Every option of Poplar's
 * reference is checked by its documented type and values
 * (engine_option_table.ts says what each does here; an option Poplar does not
 * have is an error listing Poplar's options), as are the runtime options an
 * engine takes as defaults (runtime_options.ts). What compiling and the
 * frameworks read of them is {@link EngineSettings}:
 *
 * - `autoReport.all`, `autoReport.outputGraphProfile` and
 *   `autoReport.outputExecutionProfile` turn profiling on (`autoReport.all`
 *   turns on every report the others do not switch off); reports go to
 *   `autoReport.directory` (default `.`), and with the execution profile the
 *   summary report includes the simulated execution;
 * - `debug.allowOutOfMemory` compiles a model that does not fit (so its
 *   report can be read), as does the graph profile;
 * - `prng.enableStochasticRounding` rounds float16 results stochastically and
 *   `prng.seed` seeds the device's random generator;
 * - `target.extendedMemory` needs `opt.enableStreamCopyMerging` off, and
 *   `debug.retainDebugInformation` must be on while profiling.
 */
import { ENGINE_OPTIONS, optionValueProblem } from './engine_option_table.js';
import { environmentOptionFlags, type EnvironmentOptionFlags, type OptionFlagsSource } from './environment_option_flags.js';
import { checkRuntimeOption, RUNTIME_OPTIONS } from './runtime_options.js';
import type { OptionsSettings } from './options_settings.js';

/** Every engine option Poplar documents. */
export const ENGINE_OPTION_NAMES: readonly string[] = Object.keys(ENGINE_OPTIONS);

/** The engine options of `options` that change what `compileGraph` produces (`compiles` in the option table). */
export function compileEngineOptions(options: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(options).filter(([key]) => ENGINE_OPTIONS[key]?.compiles === true));
}

/** What the engine options ask of the simulated engine. */
export interface EngineSettings {
  /** The directory profiling reports go to, when profiling is on. */
  readonly reportDirectory?: string;
  /** Whether the summary report includes the simulated execution. */
  readonly executionProfile: boolean;
  /** Whether a model that does not fit still compiles. */
  readonly allowOutOfMemory: boolean;
  /** Whether float16 results round stochastically, when the options say. */
  readonly stochasticRounding?: boolean;
  /** The seed of the device's random generator, when the options say. */
  readonly seed?: number;
}

/** Where engine options come from, for messages, and the error to raise for a bad one. */
export type EngineOptionsSource = OptionFlagsSource;

function checkValue(key: string, value: string, source: EngineOptionsSource): void {
  if (key in RUNTIME_OPTIONS) {
    checkRuntimeOption(key, value, source);
    return;
  }
  const problem = optionValueProblem(ENGINE_OPTIONS[key]!.type, value);
  if (problem) throw source.error(`${source.name}['${key}'] is '${value}'; ${problem}`);
}

/** An error naming the first option of `engineOptions` that is not an engine (or runtime) option, or whose value is not one of its values. */
export function checkEngineOptions(engineOptions: Readonly<Record<string, string>>, source: EngineOptionsSource): void {
  for (const [key, value] of Object.entries(engineOptions)) {
    if (!(key in ENGINE_OPTIONS) && !(key in RUNTIME_OPTIONS)) {
      throw source.error(`${source.name}: '${key}' is not a Poplar engine option; the options are ${ENGINE_OPTION_NAMES.join(', ')} (and the runtime options)`);
    }
    checkValue(key, value, source);
  }
}

/** The settings of `engineOptions`; an error naming an unknown option or a bad value. */
export function engineSettings(engineOptions: Readonly<Record<string, string>>, source: EngineOptionsSource): EngineSettings {
  checkEngineOptions(engineOptions, source);
  if (engineOptions['target.extendedMemory'] === 'true' && engineOptions['opt.enableStreamCopyMerging'] !== 'false') {
    throw source.error(`${source.name}: 'target.extendedMemory' requires 'opt.enableStreamCopyMerging' set to "false"`);
  }
  const on = (key: string) => engineOptions[key] === 'true';
  const report = (key: string) => (engineOptions[key] === undefined ? on('autoReport.all') : on(key));
  const graphProfile = report('autoReport.outputGraphProfile');
  const executionProfile = report('autoReport.outputExecutionProfile');
  if ((graphProfile || executionProfile) && engineOptions['debug.retainDebugInformation'] === 'false') {
    throw source.error(`${source.name}: 'debug.retainDebugInformation' must be "true" when profiling is enabled (autoReport.*)`);
  }
  const seed = engineOptions['prng.seed'];
  const rounding = engineOptions['prng.enableStochasticRounding'];
  return {
    ...(graphProfile || executionProfile ? { reportDirectory: engineOptions['autoReport.directory'] || '.' } : {}),
    executionProfile,
    allowOutOfMemory: on('debug.allowOutOfMemory') || graphProfile,
    ...(rounding !== undefined ? { stochasticRounding: rounding === 'true' } : {}),
    ...(seed !== undefined ? { seed: Number(seed) } : {}),
  };
}

/** The engine options of the environment, as given, and where they came from. */
export type EnvironmentEngineOptions = EnvironmentOptionFlags;

/**
 * The engine options of the environment: `POPTFJS_ENGINE_OPTIONS`, or
 * Poplar's `POPLAR_ENGINE_OPTIONS` when that is unset, a JSON object whose
 * values are strings (booleans and numbers are read as Poplar reads them);
 * undefined when neither is set. A `ConfigFileError` for text that is not
 * such an object.
 */
export function environmentEngineOptions(env: NodeJS.ProcessEnv = process.env): EnvironmentEngineOptions | undefined {
  return environmentOptionFlags('POPTFJS_ENGINE_OPTIONS', 'engine options', '{"autoReport.all":"true"}', env);
}

/**
 * The settings of the environment's engine options (see
 * {@link environmentEngineOptions}); undefined when none are set. A
 * `ConfigFileError` for text that is not a JSON object of strings, an
 * unknown option or a bad value.
 */
export function environmentEngineSettings(env: NodeJS.ProcessEnv = process.env): EngineSettings | undefined {
  const given = environmentEngineOptions(env);
  return given && engineSettings(given.options, given.source);
}

/**
 * An executor's settings with the environment's engine options applied over
 * them, as Poplar applies `POPLAR_ENGINE_OPTIONS` over a program's own:
 * reports (`autoReport.*`, their directory over `Options.enableProfiling`'s),
 * `debug.allowOutOfMemory`, `prng.seed` and `prng.enableStochasticRounding`.
 */
export function withEngineOptions(settings: OptionsSettings, env: NodeJS.ProcessEnv = process.env): OptionsSettings {
  const engine = environmentEngineSettings(env);
  return engine ? withEngineSettings(settings, engine) : settings;
}

/** `settings` with what `engine` asks applied over them (see {@link withEngineOptions}). */
export function withEngineSettings(settings: OptionsSettings, engine: EngineSettings): OptionsSettings {
  const profileDir = engine.reportDirectory ?? settings.profileDir;
  return {
    ...settings,
    ...(profileDir !== undefined ? { profileDir } : {}),
    allowOutOfMemory: settings.allowOutOfMemory || engine.allowOutOfMemory,
    ...(engine.seed !== undefined ? { randomSeed: engine.seed } : {}),
    precision: { ...settings.precision, ...(engine.stochasticRounding !== undefined ? { stochasticRounding: engine.stochasticRounding } : {}) },
  };
}
