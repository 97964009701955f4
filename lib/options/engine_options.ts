/**
 * Poplar engine options — PopART's `SessionOptions.engineOptions`, and for
 * every executor `POPTFJS_ENGINE_OPTIONS` (or Poplar's own
 * `POPLAR_ENGINE_OPTIONS`) — read as the simulated engine understands them:
 *
 * - `autoReport.all`, `autoReport.outputGraphProfile` and
 *   `autoReport.outputExecutionProfile` turn profiling on (`autoReport.all`
 *   turns on every report the others do not switch off); reports go to
 *   `autoReport.directory` (default `.`), and with the execution profile the
 *   summary report includes the simulated execution;
 * - `debug.allowOutOfMemory` compiles a model that does not fit (so its
 *   report can be read), as does the graph profile;
 * - `prng.enableStochasticRounding` rounds float16 results stochastically and
 *   `prng.seed` seeds the device's random generator.
 *
 * Poplar's other engine options are accepted and have no effect on the
 * simulated engine; an option Poplar does not have is an error listing
 * Poplar's options.
 */
import { ConfigFileError } from '../common/errors.js';
import { environmentSetting } from '../common/environment.js';
import type { OptionsSettings } from './options_settings.js';

const BOOLEAN_OPTIONS = [
  'debug.allowOutOfMemory',
  'debug.retainDebugInformation',
  'debug.cpuMultiThreadExecution',
  'debug.instrument',
  'debug.instrumentCompute',
  'debug.instrumentExternalExchange',
  'debug.instrumentControlFlow',
  'debug.outputAllSymbols',
  'debug.runtimeVerify',
  'debug.trace',
  'debug.verify',
  'opt.enableMultiAccessCopies',
  'opt.limitVertexStateToLower256K',
  'opt.useAutoloader',
  'opt.enableStreamCopyMerging',
  'target.gatewayWriteCombining',
  'target.extendedMemory',
  'autoReport.all',
  'autoReport.outputGraphProfile',
  'autoReport.outputLoweredVars',
  'autoReport.outputArchive',
  'autoReport.outputSerializedGraph',
  'autoReport.outputExecutionProfile',
  'autoReport.streamAtEachRun',
  'autoReport.outputDebugInfo',
  'prng.enableStochasticRounding',
];
const INTEGER_OPTIONS = [
  'debug.profilingTile',
  'debug.branchRecordTile',
  'debug.supervisorStackSizeInBytes',
  'debug.workerStackSizeInBytes',
  'opt.maxCompilationThreads',
  'opt.maxLinkerThreads',
  'autoReport.executionProfileProgramRunCount',
  'prng.seed',
];
const CHOICE_OPTIONS: Readonly<Record<string, readonly string[]>> = {
  'debug.computeInstrumentationLevel': ['vertex', 'tile', 'ipu', 'device'],
  'opt.internalExchangeOptimisationTarget': ['balanced', 'cycles', 'memory'],
  'target.deterministicWorkers': ['true', 'false', 'portable'],
};
const STRING_OPTIONS = ['debug.traceFile', 'debug.loweredVarDumpFile', 'target.saveArchive', 'autoReport.directory'];
/** Options whose value is an integer or `auto`. */
const INTEGER_OR_AUTO_OPTIONS = ['target.maxStreamCallbackThreadsPerNumaNode'];

/** Every engine option Poplar documents. */
export const ENGINE_OPTION_NAMES: readonly string[] = [...BOOLEAN_OPTIONS, ...INTEGER_OPTIONS, ...Object.keys(CHOICE_OPTIONS), ...STRING_OPTIONS, ...INTEGER_OR_AUTO_OPTIONS];
const KNOWN = ENGINE_OPTION_NAMES;

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
export interface EngineOptionsSource {
  /** What holds them: `SessionOptions.engineOptions`, `POPLAR_ENGINE_OPTIONS`. */
  readonly name: string;
  readonly error: (message: string) => Error;
}

function checkValue(key: string, value: string, source: EngineOptionsSource): void {
  const where = `${source.name}['${key}']`;
  if (BOOLEAN_OPTIONS.includes(key) && value !== 'true' && value !== 'false') throw source.error(`${where} is '${value}'; expected "true" or "false"`);
  if (INTEGER_OPTIONS.includes(key) && !/^\d+$/.test(value)) throw source.error(`${where} is '${value}'; expected a non-negative integer`);
  if (INTEGER_OR_AUTO_OPTIONS.includes(key) && !/^(\d+|auto)$/.test(value)) throw source.error(`${where} is '${value}'; expected a non-negative integer or "auto"`);
  const choices = CHOICE_OPTIONS[key];
  if (choices && !choices.includes(value)) throw source.error(`${where} is '${value}'; expected one of ${choices.join(', ')}`);
}

/** The settings of `engineOptions`; an error naming an unknown option or a bad value. */
export function engineSettings(engineOptions: Readonly<Record<string, string>>, source: EngineOptionsSource): EngineSettings {
  for (const [key, value] of Object.entries(engineOptions)) {
    if (!KNOWN.includes(key)) throw source.error(`${source.name}: '${key}' is not a Poplar engine option; the options are ${KNOWN.join(', ')}`);
    checkValue(key, value, source);
  }
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
export interface EnvironmentEngineOptions {
  /** The variable they were read from: `POPTFJS_ENGINE_OPTIONS` or `POPLAR_ENGINE_OPTIONS`. */
  readonly variable: string;
  readonly options: Readonly<Record<string, string>>;
  /** The error to raise for a bad one. */
  readonly source: EngineOptionsSource;
}

/**
 * The engine options of the environment: `POPTFJS_ENGINE_OPTIONS`, or
 * Poplar's `POPLAR_ENGINE_OPTIONS` when that is unset, a JSON object whose
 * values are strings (booleans and numbers are read as Poplar reads them);
 * undefined when neither is set. A `ConfigFileError` for text that is not
 * such an object.
 */
export function environmentEngineOptions(env: NodeJS.ProcessEnv = process.env): EnvironmentEngineOptions | undefined {
  const setting = environmentSetting('POPTFJS_ENGINE_OPTIONS', env);
  if (setting === undefined || setting.value.trim() === '') return undefined;
  const error = (message: string) => new ConfigFileError(setting.variable, 1, 1, message);
  let parsed: unknown;
  try {
    parsed = JSON.parse(setting.value);
  } catch (cause) {
    throw new ConfigFileError(setting.variable, 1, 1, `not valid JSON: ${(cause as Error).message}`, cause);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw error('expected a JSON object of engine options, e.g. {"autoReport.all":"true"}');
  const options: Record<string, string> = {};
  for (const [key, value] of Object.entries(parsed)) {
    if (typeof value !== 'string' && typeof value !== 'boolean' && typeof value !== 'number') throw error(`'${key}' is ${JSON.stringify(value)}; expected a string`);
    options[key] = String(value);
  }
  return { variable: setting.variable, options, source: { name: setting.variable, error } };
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
