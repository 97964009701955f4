/**
 * Poplar engine options (`SessionOptions.engineOptions`), read as the
 * simulated engine understands them:
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
import { PopartException } from '../errors.js';

const BOOLEAN_OPTIONS = [
  'debug.allowOutOfMemory', 'debug.retainDebugInformation', 'debug.cpuMultiThreadExecution', 'debug.instrument', 'debug.instrumentCompute',
  'debug.instrumentExternalExchange', 'debug.instrumentControlFlow', 'debug.outputAllSymbols', 'debug.runtimeVerify', 'debug.trace', 'debug.verify',
  'opt.enableMultiAccessCopies', 'opt.limitVertexStateToLower256K', 'opt.useAutoloader', 'target.gatewayWriteCombining', 'target.extendedMemory',
  'autoReport.all', 'autoReport.outputGraphProfile', 'autoReport.outputLoweredVars', 'autoReport.outputArchive', 'autoReport.outputSerializedGraph',
  'autoReport.outputExecutionProfile', 'autoReport.streamAtEachRun', 'autoReport.outputDebugInfo', 'prng.enableStochasticRounding',
];
const INTEGER_OPTIONS = [
  'debug.profilingTile', 'debug.branchRecordTile', 'debug.supervisorStackSizeInBytes', 'debug.workerStackSizeInBytes', 'opt.maxCompilationThreads',
  'opt.maxLinkerThreads', 'autoReport.executionProfileProgramRunCount', 'prng.seed',
];
const CHOICE_OPTIONS: Readonly<Record<string, readonly string[]>> = {
  'debug.computeInstrumentationLevel': ['vertex', 'tile', 'ipu', 'device'],
  'opt.internalExchangeOptimisationTarget': ['balanced', 'cycles', 'memory'],
  'target.deterministicWorkers': ['true', 'false', 'portable'],
};
const STRING_OPTIONS = ['debug.traceFile', 'target.saveArchive', 'autoReport.directory', 'target.maxStreamCallbackThreadsPerNumaNode'];

const KNOWN = [...BOOLEAN_OPTIONS, ...INTEGER_OPTIONS, ...Object.keys(CHOICE_OPTIONS), ...STRING_OPTIONS];

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

function checkValue(key: string, value: string): void {
  const where = `SessionOptions.engineOptions['${key}']`;
  if (BOOLEAN_OPTIONS.includes(key) && value !== 'true' && value !== 'false') throw new PopartException(`${where} is '${value}'; expected "true" or "false"`);
  if (INTEGER_OPTIONS.includes(key) && !/^\d+$/.test(value)) throw new PopartException(`${where} is '${value}'; expected a non-negative integer`);
  const choices = CHOICE_OPTIONS[key];
  if (choices && !choices.includes(value)) throw new PopartException(`${where} is '${value}'; expected one of ${choices.join(', ')}`);
}

/** The settings of `engineOptions`; an error naming an unknown option or a bad value. */
export function engineSettings(engineOptions: Readonly<Record<string, string>>): EngineSettings {
  for (const [key, value] of Object.entries(engineOptions)) {
    if (!KNOWN.includes(key)) {
      throw new PopartException(`SessionOptions.engineOptions: '${key}' is not a Poplar engine option; the options are ${KNOWN.join(', ')}`);
    }
    checkValue(key, value);
  }
  const on = (key: string) => engineOptions[key] === 'true';
  const report = (key: string) => (engineOptions[key] === undefined ? on('autoReport.all') : on(key));
  const graphProfile = report('autoReport.outputGraphProfile');
  const executionProfile = report('autoReport.outputExecutionProfile');
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
