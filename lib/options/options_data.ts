/**
 * Applies options data (the shape of `opts.toJSON()`, possibly partial) to an
 * `Options` through its setters, so data is checked exactly like calls are.
 * Used by `Options.fromJSON`, JSON config files and `POPTFJS_DEFAULT_OPTIONS`.
 */
import { z } from 'zod';
import { executionStrategyFromJSON } from '../strategy/execution_strategy_from_json.js';
import { OutputMode } from '../option_vocabulary/enums.js';
import { type OptionsDataPath, OptionsDataError, optionsDataErrorFromZod } from '../option_vocabulary/options_data_error.js';
import type { OptionSetters } from './option_setters.js';
import type { GeneralSettings, GroupSettings } from './options_settings.js';
import { TENSOR_LOCATION_KEYS, TensorLocationSettings } from '../option_vocabulary/tensor_location_settings.js';
import { TENSOR_KINDS } from './tensor_locations_options.js';

/** Data keys set by a one-argument `Options` method, with that method, in the order they are applied. */
const GENERAL_SETTERS = {
  deviceIterations: 'deviceIterations',
  replicationFactor: 'replicationFactor',
  autoRoundNumIPUs: 'autoRoundNumIPUs',
  useIpuModel: 'useIpuModel',
  ipuId: 'useIpuId',
  // Before connectionType: an offline target also sets the connection type.
  offlineIpuVersion: 'useOfflineIpuTarget',
  randomSeed: 'randomSeed',
  executableCachePath: 'enableExecutableCaching',
  syntheticData: 'enableSyntheticData',
  logDir: 'logDir',
  modelName: 'modelName',
  connectionType: 'connectionType',
  syncPattern: 'syncPattern',
  broadcastBuffers: 'broadcastBuffers',
  updatableNamedBuffers: 'updatableNamedBuffers',
  relaxOptimizerAttributesChecks: 'relaxOptimizerAttributesChecks',
  showCompilationProgressBar: 'showCompilationProgressBar',
  profileDir: 'enableProfiling',
  backend: 'backend',
  parallelIpus: 'parallelIpus',
  ipuTarget: 'ipuTarget',
  allowOutOfMemory: 'allowOutOfMemory',
  autoRecomputation: 'autoRecomputation',
} as const satisfies Partial<Record<keyof GeneralSettings, keyof OptionSetters>>;

/** Group data keys with the group method that sets each. */
const TRAINING_SETTERS = {
  gradientAccumulation: 'gradientAccumulation',
  reductionType: 'accumulationAndReplicationReductionType',
  meanReductionStrategy: 'setMeanAccumulationAndReplicationReductionStrategy',
  automaticLossScaling: 'setAutomaticLossScaling',
} as const satisfies Record<keyof GroupSettings['training'], keyof OptionSetters['Training']>;

const PRECISION_SETTERS = {
  partialsType: 'setPartialsType',
  stochasticRounding: 'enableStochasticRounding',
  floatingPointExceptions: 'enableFloatingPointExceptions',
  halfFloatCasting: 'halfFloatCasting',
  runningStatisticsAlwaysFloat: 'runningStatisticsAlwaysFloat',
} as const satisfies Record<keyof GroupSettings['precision'], keyof OptionSetters['Precision']>;

const LOCATION_SETTERS = {
  activation: 'setActivationLocation',
  weight: 'setWeightLocation',
  optimizer: 'setOptimizerLocation',
  accumulator: 'setAccumulatorLocation',
} as const satisfies Record<(typeof TENSOR_KINDS)[number], keyof OptionSetters['TensorLocations']>;

const leaf = z.unknown().optional();

function shapeOf(keys: readonly string[]) {
  return Object.fromEntries(keys.map((key) => [key, leaf]));
}

const locationShape = z.strictObject(shapeOf(TENSOR_LOCATION_KEYS));

/** The structure of options data: known keys only; values are checked by the setters. */
const optionsDataShape = z.strictObject({
  ...shapeOf([...Object.keys(GENERAL_SETTERS), 'outputMode', 'outputReturnPeriod', 'executionStrategy']),
  inputReplicaGrouping: z.strictObject({ size: leaf, type: leaf }).optional(),
  patterns: z.strictObject({ level: leaf, overrides: leaf }).optional(),
  availableMemoryProportion: leaf,
  anchoredTensors: z.record(z.string(), z.strictObject({ longName: leaf, outputMode: leaf, outputReturnPeriod: leaf })).optional(),
  training: z.strictObject(shapeOf(Object.keys(TRAINING_SETTERS))).optional(),
  precision: z.strictObject(shapeOf(Object.keys(PRECISION_SETTERS))).optional(),
  tensorLocations: z
    .strictObject({
      numIOTiles: leaf,
      activation: locationShape.optional(),
      weight: locationShape.optional(),
      optimizer: locationShape.optional(),
      accumulator: locationShape.optional(),
    })
    .optional(),
  distributed: z.strictObject({ processId: leaf, numProcesses: leaf }).optional(),
});

type Setter = (this: unknown, ...args: unknown[]) => unknown;

/** Runs `action`; an error it throws becomes an {@link OptionsDataError} at `path`. */
function at(path: OptionsDataPath, action: () => void): void {
  try {
    action();
  } catch (error) {
    if (error instanceof OptionsDataError) throw new OptionsDataError([...path, ...error.path], error.reason, error);
    throw new OptionsDataError(path, error instanceof Error ? error.message : String(error), error);
  }
}

/** Calls `target[method](value)` for each key of `setters` present in `data`, in the order of `setters`. */
function applySetters(target: object, setters: Record<string, string>, data: Record<string, unknown>, base: OptionsDataPath): void {
  for (const [key, method] of Object.entries(setters)) {
    const value = data[key];
    if (value === undefined) continue;
    const setter = (target as Record<string, Setter>)[method] as Setter;
    at([...base, key], () => setter.call(target, value));
  }
}

/**
 * A return period as the `outputMode`-style setters take it: in data, every
 * mode carries a period (1 when not `EveryN`), which setters refuse unless the
 * mode is `EveryN`.
 */
function periodArgument(mode: unknown, period: unknown): unknown {
  return mode === OutputMode.EveryN || period !== 1 ? period : undefined;
}

/**
 * Applies `data` to `options` key by key through the setters. Absent keys keep
 * their current values. Throws an {@link OptionsDataError} naming the path of
 * the first unknown key or refused value; keys before it are already applied,
 * so callers wanting all-or-nothing apply to a clone.
 */
export function applyOptionsData(options: OptionSetters, data: unknown): void {
  const parsed = optionsDataShape.safeParse(data);
  if (!parsed.success) {
    if (typeof data !== 'object' || data === null || Array.isArray(data)) {
      throw new OptionsDataError([], 'options data must be an object such as {"deviceIterations": 4}', parsed.error);
    }
    throw optionsDataErrorFromZod(parsed.error);
  }
  const value = parsed.data as Record<string, unknown> & z.infer<typeof optionsDataShape>;

  applySetters(options, GENERAL_SETTERS, value, []);
  const grouping = value.inputReplicaGrouping;
  if (grouping !== undefined) {
    const current = options.settings.inputReplicaGrouping;
    at(['inputReplicaGrouping'], () => options.inputReplicaGrouping((grouping.size ?? current.size) as never, (grouping.type ?? current.type) as never));
  }
  if (value.availableMemoryProportion !== undefined) {
    const proportions = value.availableMemoryProportion as Record<string, number>;
    at(['availableMemoryProportion'], () => options.setAvailableMemoryProportion(proportions));
  }
  const patterns = value.patterns;
  if (patterns !== undefined) {
    const current = options.settings.patterns;
    at(['patterns'], () => options.patterns((patterns.level ?? current.level) as never, (patterns.overrides ?? current.overrides) as never));
  }
  if (value.outputMode !== undefined || value.outputReturnPeriod !== undefined) {
    const current = options.settings;
    const mode = value.outputMode ?? current.outputMode;
    const keepsPeriod = mode === OutputMode.EveryN && current.outputMode === OutputMode.EveryN;
    const period = value.outputReturnPeriod ?? (keepsPeriod ? current.outputReturnPeriod : undefined);
    at([value.outputMode !== undefined ? 'outputMode' : 'outputReturnPeriod'], () => options.outputMode(mode as never, periodArgument(mode, period) as never));
  }
  if (value.executionStrategy !== undefined) {
    const strategyData = value.executionStrategy;
    at(['executionStrategy'], () => options.setExecutionStrategy(executionStrategyFromJSON(strategyData)));
  }
  for (const [shortName, anchor] of Object.entries(value.anchoredTensors ?? {})) {
    at(['anchoredTensors', shortName], () =>
      options.anchorTensor(shortName, anchor.longName as never, anchor.outputMode as never, periodArgument(anchor.outputMode, anchor.outputReturnPeriod) as never),
    );
  }

  if (value.training !== undefined) applySetters(options.Training, TRAINING_SETTERS, value.training, ['training']);
  if (value.precision !== undefined) applySetters(options.Precision, PRECISION_SETTERS, value.precision, ['precision']);
  const locations = value.tensorLocations;
  if (locations !== undefined) {
    if (locations.numIOTiles !== undefined) {
      at(['tensorLocations', 'numIOTiles'], () => options.TensorLocations.numIOTiles(locations.numIOTiles as never));
    }
    for (const kind of TENSOR_KINDS) {
      const location = locations[kind];
      if (location === undefined) continue;
      const settings = new TensorLocationSettings();
      applySetters(settings, Object.fromEntries(TENSOR_LOCATION_KEYS.map((key) => [key, key])), location, ['tensorLocations', kind]);
      at(['tensorLocations', kind], () => options.TensorLocations[LOCATION_SETTERS[kind]](settings));
    }
  }
  const distributed = value.distributed;
  if (distributed !== undefined) {
    const current = options.settings.distributed;
    at(['distributed'], () =>
      options.Distributed.configureProcessId((distributed.processId ?? current.processId) as never, (distributed.numProcesses ?? current.numProcesses) as never),
    );
  }
}
