/**
 * Options written as a config file of PopTorch's form, one option call per
 * line, which `Options.loadFromFile` reads back into the same options:
 *
 * ```
 * replicationFactor(4)
 * Training.gradientAccumulation(510)
 * setExecutionStrategy(PipelinedExecution(Stage("embeddings", "layer0").ipu(0), Stage("layer1").ipu(1)))
 * setAvailableMemoryProportion({"IPU0": 0.2, "IPU1": 0.3})
 * ```
 *
 * Only what differs from the built-in defaults is written. An option that a
 * config file cannot set (a process layout of `Distributed`) is an error
 * naming it, never left out.
 */
import { PoptfjsError } from '../common/errors.js';
import type { TensorLocationData } from '../option_vocabulary/tensor_location_settings.js';
import { Options } from './options.js';
import type { OptionsSettings } from './options_settings.js';

/** A value as a config file writes it: strings quoted, booleans as Python's. */
function literal(value: unknown): string {
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new PoptfjsError(`a config file cannot hold the number ${value}`, { type: 'options' });
    return String(value);
  }
  if (value === null || value === undefined) return 'None';
  if (Array.isArray(value)) return `[${value.map(literal).join(', ')}]`;
  return `{${Object.entries(value as Record<string, unknown>)
    .map(([k, v]) => `${JSON.stringify(k)}: ${literal(v)}`)
    .join(', ')}}`;
}

/** `TensorLocationSettings()` with a chained call per setting. */
function location(data: TensorLocationData): string {
  return `TensorLocationSettings()${Object.entries(data)
    .map(([method, value]) => `.${method}(${literal(value)})`)
    .join('')}`;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * `options` as a config file of PopTorch's form that `Options.loadFromFile`
 * reads back into options equal to them (their `toJSON()`); the options the
 * defaults already give are left out.
 */
export function optionsConfigText(options: Options): string {
  const s: OptionsSettings = options.settings;
  const d: OptionsSettings = Options.fromJSON({}).settings;
  const lines: string[] = [];
  const call = (key: keyof OptionsSettings, statement: () => string) => {
    if (!same(s[key], d[key])) lines.push(statement());
  };
  call('deviceIterations', () => `deviceIterations(${s.deviceIterations})`);
  call('replicationFactor', () => `replicationFactor(${s.replicationFactor})`);
  call('inputReplicaGrouping', () => `inputReplicaGrouping(${s.inputReplicaGrouping.size}, CommGroupType.${s.inputReplicaGrouping.type})`);
  if (s.outputMode !== d.outputMode || s.outputReturnPeriod !== d.outputReturnPeriod) lines.push(`outputMode(OutputMode.${s.outputMode}, ${s.outputReturnPeriod})`);
  call('autoRoundNumIPUs', () => `autoRoundNumIPUs(${literal(s.autoRoundNumIPUs)})`);
  call('useIpuModel', () => `useIpuModel(${literal(s.useIpuModel)})`);
  call('ipuId', () => `useIpuId(${s.ipuId})`);
  call('offlineIpuVersion', () => `useOfflineIpuTarget(${s.offlineIpuVersion})`);
  call('randomSeed', () => `randomSeed(${s.randomSeed})`);
  call('executableCachePath', () => `enableExecutableCaching(${literal(s.executableCachePath)})`);
  call('syntheticData', () => `enableSyntheticData(${literal(s.syntheticData)})`);
  call('logDir', () => `logDir(${literal(s.logDir)})`);
  call('modelName', () => `modelName(${literal(s.modelName)})`);
  call('connectionType', () => `connectionType(ConnectionType.${s.connectionType})`);
  call('syncPattern', () => `syncPattern(SyncPattern.${s.syncPattern})`);
  call('broadcastBuffers', () => `broadcastBuffers(${literal(s.broadcastBuffers)})`);
  for (const [short, anchor] of Object.entries(s.anchoredTensors)) {
    const mode = anchor.outputMode === undefined ? '' : `, OutputMode.${anchor.outputMode}, ${anchor.outputReturnPeriod}`;
    lines.push(`anchorTensor(${literal(short)}, ${literal(anchor.longName)}${mode})`);
  }
  call('updatableNamedBuffers', () => `updatableNamedBuffers(${literal(s.updatableNamedBuffers)})`);
  call('relaxOptimizerAttributesChecks', () => `relaxOptimizerAttributesChecks(${literal(s.relaxOptimizerAttributesChecks)})`);
  call('showCompilationProgressBar', () => `showCompilationProgressBar(${literal(s.showCompilationProgressBar)})`);
  call('profileDir', () => `enableProfiling(${literal(s.profileDir)})`);
  call('backend', () => `backend(${literal(s.backend)})`);
  call('parallelIpus', () => `parallelIpus(${literal(s.parallelIpus)})`);
  call('patterns', () => `patterns(${literal(s.patterns.level)}, ${literal(s.patterns.overrides)})`);
  call('ipuTarget', () => `ipuTarget(${literal(Object.keys(s.ipuTarget).length === 1 && s.ipuTarget.ipu !== undefined ? s.ipuTarget.ipu : s.ipuTarget)})`);
  call('allowOutOfMemory', () => `allowOutOfMemory(${literal(s.allowOutOfMemory)})`);
  call('autoRecomputation', () => `autoRecomputation(${literal(s.autoRecomputation)})`);
  call(
    'availableMemoryProportion',
    () => `setAvailableMemoryProportion(${literal(Object.fromEntries(Object.entries(s.availableMemoryProportion).map(([ipu, p]) => [`IPU${ipu}`, p])))})`,
  );
  call('executionStrategy', () => `setExecutionStrategy(${s.executionStrategy.toString()})`);
  const t = s.training;
  const dt = d.training;
  if (t.gradientAccumulation !== dt.gradientAccumulation) lines.push(`Training.gradientAccumulation(${t.gradientAccumulation})`);
  if (t.reductionType !== dt.reductionType) lines.push(`Training.accumulationAndReplicationReductionType(ReductionType.${t.reductionType})`);
  if (t.meanReductionStrategy !== dt.meanReductionStrategy)
    lines.push(`Training.setMeanAccumulationAndReplicationReductionStrategy(MeanReductionStrategy.${t.meanReductionStrategy})`);
  if (t.automaticLossScaling !== dt.automaticLossScaling) lines.push(`Training.setAutomaticLossScaling(${literal(t.automaticLossScaling)})`);
  const p = s.precision;
  const dp = d.precision;
  if (p.partialsType !== dp.partialsType) lines.push(`Precision.setPartialsType(${literal(p.partialsType)})`);
  if (p.stochasticRounding !== dp.stochasticRounding) lines.push(`Precision.enableStochasticRounding(${literal(p.stochasticRounding)})`);
  if (p.floatingPointExceptions !== dp.floatingPointExceptions) lines.push(`Precision.enableFloatingPointExceptions(${literal(p.floatingPointExceptions)})`);
  if (p.halfFloatCasting !== dp.halfFloatCasting) lines.push(`Precision.halfFloatCasting(HalfFloatCastingBehavior.${p.halfFloatCasting})`);
  if (p.runningStatisticsAlwaysFloat !== dp.runningStatisticsAlwaysFloat) lines.push(`Precision.runningStatisticsAlwaysFloat(${literal(p.runningStatisticsAlwaysFloat)})`);
  const l = s.tensorLocations;
  const dl = d.tensorLocations;
  if (l.numIOTiles !== dl.numIOTiles) lines.push(`TensorLocations.numIOTiles(${l.numIOTiles})`);
  const locations = [
    ['activation', 'setActivationLocation'],
    ['weight', 'setWeightLocation'],
    ['optimizer', 'setOptimizerLocation'],
    ['accumulator', 'setAccumulatorLocation'],
  ] as const;
  for (const [kind, method] of locations) if (!same(l[kind], dl[kind])) lines.push(`TensorLocations.${method}(${location(l[kind])})`);
  if (!same(s.distributed, d.distributed)) {
    throw new PoptfjsError('these options set Distributed (the process layout of a run), which a config file does not hold; leave it to popdist or the environment', {
      type: 'options',
    });
  }
  return `${lines.join('\n')}\n`;
}
