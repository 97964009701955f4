/**
 * The poptfjs `Options` a session compiles with, from its `SessionOptions`,
 * engine options, `DataFlow`, device and patterns: the same options the
 * model wrappers compile with, so sessions share their compile path.
 */
import { PopartException } from '../common/errors.js';
import type { Device } from '../ipu/device.js';
import { Patterns } from '../ir/patterns/patterns.js';
import { OutputMode } from '../option_vocabulary/enums.js';
import { TensorLocationSettings } from '../option_vocabulary/tensor_location_settings.js';
import { Options } from '../options/options.js';
import type { ExecutionStrategy } from '../strategy/execution_strategy.js';
import type { EngineSettings } from '../options/engine_options.js';
import type { SessionSettings } from './session_options.js';

/** What {@link executionOptions} builds options from. */
export interface ExecutionOptionsRequest {
  readonly settings: SessionSettings;
  readonly engine: EngineSettings;
  readonly batchesPerStep: number;
  readonly training: boolean;
  readonly strategy: ExecutionStrategy;
  readonly device: Device;
  readonly patterns: Patterns | undefined;
  readonly modelName: string;
  /** The directory profiling reports go to, if any. */
  readonly reportDirectory: string | undefined;
}

/** The pattern overrides that make `Patterns(level)` into `patterns`. */
function patternOverrides(patterns: Patterns): Record<string, boolean> {
  const base = new Patterns(patterns.level);
  const overrides: Record<string, boolean> = {};
  for (const pattern of Patterns.knownPatterns()) {
    const enabled = patterns.isPatternEnabled(pattern.name);
    if (enabled !== base.isPatternEnabled(pattern.name)) overrides[pattern.name] = enabled;
  }
  return overrides;
}

/** The replicas a session runs. */
export function replicationFactorOf(settings: SessionSettings): number {
  return settings.enableReplicatedGraphs ? settings.replicatedGraphCount : 1;
}

/** The gradient accumulation factor of a session; an error for accumulation in inference. */
export function accumulationFactorOf(settings: SessionSettings, training: boolean): number {
  const factor = settings.enableGradientAccumulation ? settings.accumulationFactor : 1;
  if (!training && factor > 1) {
    throw new PopartException(`gradient accumulation (accumulationFactor ${factor}) only applies to training; disable enableGradientAccumulation for an InferenceSession`);
  }
  return factor;
}

/** The options a session compiles with (frozen). */
export function executionOptions(request: ExecutionOptionsRequest): Options {
  const { settings, engine } = request;
  const options = new Options({ fromEnvironment: false })
    .deviceIterations(request.batchesPerStep)
    .replicationFactor(replicationFactorOf(settings))
    .outputMode(OutputMode.All)
    .setExecutionStrategy(request.strategy)
    .autoRoundNumIPUs(true)
    .ipuTarget(request.device.spec)
    .useIpuModel(request.device.kind === 'IpuModel')
    .allowOutOfMemory(engine.allowOutOfMemory)
    .autoRecomputation(settings.autoRecomputation)
    .modelName(request.modelName)
    .showCompilationProgressBar(false);
  if (request.training) {
    options.Training.gradientAccumulation(accumulationFactorOf(settings, true))
      .accumulationAndReplicationReductionType(settings.accumulationAndReplicationReductionType)
      .setMeanAccumulationAndReplicationReductionStrategy(settings.meanAccumulationAndReplicationReductionStrategy);
  } else {
    accumulationFactorOf(settings, false);
  }
  options.Precision.enableStochasticRounding(engine.stochasticRounding ?? settings.enableStochasticRounding);
  if (engine.seed !== undefined) options.randomSeed(engine.seed);
  if (request.reportDirectory !== undefined) options.enableProfiling(request.reportDirectory);
  if (request.patterns) options.patterns(request.patterns.level, patternOverrides(request.patterns));
  if (request.strategy.toJSON().type.endsWith('PhasedExecution')) {
    // PopART keeps tensors on chip in execution phases unless told otherwise; the off-chip default is PopTorch's.
    const onChip = () => new TensorLocationSettings().useOnChipStorage(true);
    options.TensorLocations.setActivationLocation(onChip()).setWeightLocation(onChip()).setOptimizerLocation(onChip()).setAccumulatorLocation(onChip());
  }
  return options.freeze();
}
