/**
 * `opts._Popart`: PopTorch's escape hatch to PopART's session options and
 * patterns (`opts._Popart.set("enableStochasticRounding", true)`,
 * `opts._Popart.setPatterns({ ... }, level)`), mapped onto the options
 * poptfjs has.
 */
import { PoptfjsError } from '../common/errors.js';
import { describeValue } from '../option_vocabulary/argument_rules.js';
import { MeanReductionStrategy, PartialsType, ReductionType } from '../option_vocabulary/enums.js';
import { PATTERNS_LEVELS } from '../ir/patterns/pattern.js';
import { Patterns } from '../ir/patterns/patterns.js';
import { RecomputationType } from '../strategy/recomputation.js';
import { engineSettings } from './engine_options.js';
import type { OptionSetters } from './option_setters.js';

/** A value `set` takes: PopART's option types. */
export type PopartOptionValue = boolean | number | string | readonly (string | number)[] | ReadonlySet<string | number> | Readonly<Record<string, string>>;

/** PopART's `SessionOptions` that PopTorch sets itself from its own options: set those instead. */
const SET_BY_POPTORCH: Readonly<Record<string, string>> = {
  enableReplicatedGraphs: 'Options.replicationFactor',
  replicatedGraphCount: 'Options.replicationFactor',
  enableGradientAccumulation: 'Options.Training.gradientAccumulation',
  accumulationFactor: 'Options.Training.gradientAccumulation',
  virtualGraphMode: 'Options.setExecutionStrategy',
  enablePipelining: 'Options.setExecutionStrategy',
  'executionPhaseSettings.phases': 'Options.setExecutionStrategy',
  'executionPhaseSettings.stages': 'Options.setExecutionStrategy',
};

/** PopART's other `SessionOptions` (those PopTorch's `_Popart.set` accepts): they tune what the simulated IPU does not model. */
const NOT_MODELLED = new Set([
  'autodiffSettings.stitchStrategy',
  'batchSerializationSettings.factor',
  'batchSerializationSettings.transformContext',
  'batchSerializationSettings.method',
  'batchSerializationSettings.batchSchedule',
  'batchSerializationSettings.concatOnVirtualGraphChange',
  'batchSerializationSettings.concatOnExecutionPhaseChange',
  'batchSerializationSettings.concatOnPipelineStageChange',
  'accumulateOuterFragmentSettings.schedule',
  'accumulateOuterFragmentSettings.excludedVirtualGraphs',
  'automaticLossScalingSettings.binEdgeLocation',
  'automaticLossScalingSettings.thresholdUpperCountProportion',
  'automaticLossScalingSettings.updatePeriod',
  'automaticLossScalingSettings.gradientTensorTrackingMethod',
  'mergeVarUpdate',
  'mergeVarUpdateMemThreshold',
  'subgraphCopyingStrategy',
  'customCodeletCompileFlags',
  'customCodelets',
  'serializedPoprithmsShiftGraphsDir',
  'kahnTieBreaker',
  'firstDotOp',
  'finalDotOp',
  'dotChecks',
  'dotOpNames',
  'hardwareInstrumentations',
  'looseThresholdAtPeak',
  'swapLimitScheduler',
  'globalReplicationFactor',
  'globalReplicaOffset',
  'defaultBufferingDepth',
  'defaultPrefetchBufferingDepth',
  'compilationProgressTotal',
  'transitiveClosureOptimizationThreshold',
  'enableInplaceAmbiguityChecking',
  'enableLoadAndOffloadRNGState',
  'strictOpVersions',
  'opxAliasChecking',
  'opxModifyChecking',
  'exportPoplarComputationGraph',
  'exportPoplarVertexGraph',
  'separateCallOpPdfs',
  'enableOutlining',
  'enableOutliningCopyCostPruning',
  'outlineSequenceBreakCost',
  'outlineThreshold',
  'rearrangeAnchorsOnHost',
  'rearrangeStreamsOnHost',
  'enablePrefetchDatastreams',
  'enableNonStableSoftmax',
  'disableGradAccumulationTensorStreams',
  'disableOptimizerStateTensorStreams',
  'compileEngine',
  'constantWeights',
  'enableMergeExchange',
  'ensureFp32LossScaleTensor',
  'explicitRecomputation',
  'enableExplicitMainLoops',
  'enableExplicitIR',
  'useHostCopyOps',
  'aliasZeroCopy',
  'delayVarUpdates',
  'enableFullyConnectedPass',
  'enableSerializedMatmuls',
  'enableStableNorm',
  'decomposeGradSum',
  'enableDistributedReplicatedGraphs',
  'groupHostSync',
  'enableSupportedDataTypeCasting',
  'groupNormStridedChannelGrouping',
  'scheduleNonWeightUpdateGradientConsumersEarly',
  'timeLimitScheduler',
  'saveInitializersToFile',
  'convolutionOptions',
  'matmulOptions',
  'lstmOptions',
  'gclOptions',
]);

/** PopART's patterns (`Patterns(["PadSum"])`), none of which poptfjs's graph has: it has its own (`Patterns.knownPatterns()`). */
const POPART_PATTERNS = new Set([
  'AbsGradOp',
  'AllReduceToIdentity',
  'Atan2Arg0GradOp',
  'Atan2Arg1GradOp',
  'ConvDataGrad',
  'ConvFlipWeightsDoubleFlip',
  'ConvFlipWeightsGradOp',
  'ConvTranspose',
  'CosGradOp',
  'CoshOp',
  'DecomposeBinaryConstScalar',
  'DivArg0GradOp',
  'DivArg1GradOp',
  'ExpGradOp',
  'ExpandCast',
  'Expm1GradOp',
  'FmodArg0GradOp',
  'InitAccumulate',
  'InPlace',
  'LSTMOp',
  'LambSerialisedWeight',
  'Log1pGradOp',
  'LogGradOp',
  'LoopScanOut',
  'MatMulLhsGradOp',
  'MatMulOp',
  'MatMulRhsGradOp',
  'MulArgGradOp',
  'NegativeOneScale',
  'NlllWithSoftmaxGradDirect',
  'OpToIdentity',
  'PackedDataBlock',
  'PadSum',
  'PostNRepl',
  'PowArg0GradOp',
  'PowArg1GradOp',
  'PreUniRepl',
  'ReciprocalGradOp',
  'RemoveUnnecessaryLossGradCast',
  'ScanToLoop',
  'Slice2SliceSubsample',
  'SoftmaxGradDirect',
  'SplitGather',
  'SplitGradOpToConcat',
  'SplitOp',
  'SqrtGradOp',
  'SubtractArg1GradOp',
  'SumToAdd',
  'TiedGather',
  'TiedGatherAccumulate',
  'TransposeToIdentityOrReshapePattern',
  'UpdateInplacePrioritiesForIpu',
  'UpsampleToResize',
]);

/** PopART's enumerations as `set` takes them (integers), by option. */
const RECOMPUTATION_TYPES = [RecomputationType.None, RecomputationType.Standard, RecomputationType.NormOnly, RecomputationType.Pipeline, RecomputationType.RecomputeAll];
const REDUCTION_TYPES = [ReductionType.Sum, ReductionType.Mean, ReductionType.NoReduction];
const MEAN_REDUCTION_STRATEGIES = [MeanReductionStrategy.Running, MeanReductionStrategy.Post];

/** The type PopTorch names an option by in its `Unknown <type> option` error. */
function popartTypeOf(value: unknown): string {
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return Number.isInteger(value) && value >= 0 ? 'uint64' : 'double';
  if (typeof value === 'string') return 'string';
  return 'container';
}

function optionError(message: string): PoptfjsError {
  return new PoptfjsError(message, { type: 'options' });
}

/**
 * PopART's session options and patterns, as PopTorch's `opts._Popart`;
 * reach it as `opts._Popart`. The PopART options poptfjs has are set on the
 * options they are (`enableStochasticRounding` is
 * `Precision.enableStochasticRounding`); those PopTorch sets from its own
 * options are refused, naming the option to use; PopART's other options
 * tune what the simulated IPU does not model and are refused, saying so; a
 * name PopART does not have is refused as PopTorch refuses it
 * (`Unknown bool option enableOutlinning`).
 */
export class PopartOptions {
  readonly #options: OptionSetters;
  #cachePath = 'session_cache';
  #caching = false;

  /** @internal `Options` builds its groups. */
  constructor(options: OptionSetters) {
    this.#options = options;
  }

  /**
   * Sets PopART's session option `key` to `value`: `autoRecomputation`
   * (PopART's `RecomputationType` as an integer: 0 None, 1 Standard,
   * 2 NormOnly, 3 Pipeline, 4 RecomputeAll), `enableStochasticRounding`,
   * `enableFloatingPointChecks`, `accumulationAndReplicationReductionType`
   * (0 Sum, 1 Mean, 2 NoReduction), `meanAccumulationAndReplicationReductionStrategy`
   * (0 Running, 1 Post), `automaticLossScalingSettings.enabled`,
   * `partialsTypeMatMuls` (`'half'` or `'float'`), `numIOTiles`,
   * `updatableNamedBuffers`, `logDir`, `syntheticDataMode` (0 Off or 2
   * RandomNormal, as `enableSyntheticData`), `engineOptions` (Poplar engine
   * options: `debug.allowOutOfMemory`, `autoReport.*`, `prng.seed`,
   * `prng.enableStochasticRounding`), `enableEngineCaching` and `cachePath`
   * (`enableExecutableCaching`), `instrumentWithHardwareCycleCounter` (true:
   * the simulated IPU always counts cycles).
   */
  set(key: string, value: PopartOptionValue): this {
    const where = `Options._Popart.set('${key}')`;
    const options = this.#options;
    const enumValue = <T>(values: readonly T[], names: string): T => {
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value >= values.length) {
        throw optionError(`${where}: expected one of ${names}, got ${describeValue(value)}`);
      }
      return values[value]!;
    };
    const bool = (): boolean => {
      if (typeof value !== 'boolean') throw optionError(`${where}: expected a boolean, got ${describeValue(value)}`);
      return value;
    };
    switch (key) {
      case 'autoRecomputation':
        options.autoRecomputation(enumValue(RECOMPUTATION_TYPES, '0 (None), 1 (Standard), 2 (NormOnly), 3 (Pipeline), 4 (RecomputeAll)'));
        return this;
      case 'enableStochasticRounding':
        options.Precision.enableStochasticRounding(bool());
        return this;
      case 'enableFloatingPointChecks':
        options.Precision.enableFloatingPointExceptions(bool());
        return this;
      case 'accumulationAndReplicationReductionType':
        options.Training.accumulationAndReplicationReductionType(enumValue(REDUCTION_TYPES, '0 (Sum), 1 (Mean), 2 (NoReduction)'));
        return this;
      case 'meanAccumulationAndReplicationReductionStrategy':
        options.Training.setMeanAccumulationAndReplicationReductionStrategy(enumValue(MEAN_REDUCTION_STRATEGIES, '0 (Running), 1 (Post)'));
        return this;
      case 'automaticLossScalingSettings.enabled':
        options.Training.setAutomaticLossScaling(bool());
        return this;
      case 'partialsTypeMatMuls':
        if (value !== PartialsType.Half && value !== PartialsType.Float) throw optionError(`${where}: expected 'half' or 'float', got ${describeValue(value)}`);
        options.Precision.setPartialsType(value);
        return this;
      case 'numIOTiles':
        options.TensorLocations.numIOTiles(value as number);
        return this;
      case 'updatableNamedBuffers':
        options.updatableNamedBuffers(value instanceof Set ? [...value].map(String) : (value as string[]));
        return this;
      case 'logDir':
        options.logDir(value as string);
        return this;
      case 'syntheticDataMode': {
        if (value !== 0 && value !== 2) {
          throw optionError(
            `${where}: expected 0 (Off) or 2 (RandomNormal, the data Options.enableSyntheticData(true) generates), got ${describeValue(value)}; the simulated IPU does not generate zeros or uniform data`,
          );
        }
        options.enableSyntheticData(value === 2);
        return this;
      }
      case 'engineOptions':
        this.#setEngineOptions(where, value);
        return this;
      case 'cachePath':
        if (typeof value !== 'string' || value === '') throw optionError(`${where}: expected a directory, got ${describeValue(value)}`);
        this.#cachePath = value;
        if (this.#caching) options.enableExecutableCaching(value);
        return this;
      case 'enableEngineCaching':
        this.#caching = bool();
        options.enableExecutableCaching(this.#caching ? this.#cachePath : null);
        return this;
      case 'instrumentWithHardwareCycleCounter':
        if (!bool()) throw optionError(`${where}: the simulated IPU always counts the cycles of each run (executor.cycleCount()); only true is accepted`);
        return this;
    }
    const instead = SET_BY_POPTORCH[key];
    if (instead !== undefined) throw optionError(`${where}: PopTorch sets PopART's ${key} from its own options; use ${instead}`);
    if (NOT_MODELLED.has(key)) {
      throw optionError(
        `${where}: PopART's session option ${key} tunes what the simulated IPU does not model (outlining, scheduling, host streams, codelets, PopART's own checks and exports), so poptfjs refuses it rather than ignore it`,
      );
    }
    throw optionError(`${where}: Unknown ${popartTypeOf(value)} option ${key}`);
  }

  /** Sets Poplar's engine options, as `set('engineOptions', options)`. */
  setEngineOptions(engineOptions: Readonly<Record<string, string>>): this {
    this.#setEngineOptions('Options._Popart.setEngineOptions', engineOptions);
    return this;
  }

  /**
   * Selects the graph rewrites, as PopTorch's `setPatterns(patterns, level)`:
   * `level` 0 (NoPatterns), 1 (Minimal), 2 (Default, the default) or 3
   * (All), and `patterns` switching single patterns on or off by name
   * (`Options.patterns`). The names are poptfjs's patterns
   * (`Patterns.knownPatterns()`); PopART's own patterns (`PadSum`,
   * `OpToIdentity`, ...) rewrite PopART's graph, which poptfjs does not have,
   * and are refused by name; a name PopART does not know either is refused
   * as PopART refuses it (`Unknown pattern X`).
   */
  setPatterns(patterns: Readonly<Record<string, boolean>>, level = 2): this {
    const where = 'Options._Popart.setPatterns';
    const named = PATTERNS_LEVELS[level];
    if (!Number.isInteger(level) || named === undefined) {
      throw optionError(`${where}: level must be 0 (NoPatterns), 1 (Minimal), 2 (Default) or 3 (All), got ${describeValue(level)}`);
    }
    if (patterns === null || typeof patterns !== 'object' || Array.isArray(patterns)) {
      throw optionError(`${where}: patterns must be an object of pattern names to booleans, got ${describeValue(patterns)}`);
    }
    const known = Patterns.knownPatterns().map((p) => p.name);
    for (const name of Object.keys(patterns)) {
      if (known.includes(name)) continue;
      if (POPART_PATTERNS.has(name)) {
        throw optionError(`${where}: PopART's pattern ${name} rewrites PopART's graph, which poptfjs does not have; poptfjs's patterns are ${known.join(', ')}`);
      }
      throw optionError(`${where}: Unknown pattern ${name}; poptfjs's patterns are ${known.join(', ')}`);
    }
    this.#options.patterns(named, patterns);
    return this;
  }

  #setEngineOptions(where: string, value: unknown): void {
    if (value === null || typeof value !== 'object' || Array.isArray(value) || value instanceof Set) {
      throw optionError(`${where}: expected an object of Poplar engine option names to strings, got ${describeValue(value)}`);
    }
    const engine = engineSettings(value as Record<string, string>, { name: where, error: (message) => optionError(message) });
    const options = this.#options;
    options.allowOutOfMemory(engine.allowOutOfMemory);
    if (engine.reportDirectory !== undefined) options.enableProfiling(engine.reportDirectory);
    if (engine.seed !== undefined) options.randomSeed(engine.seed);
    if (engine.stochasticRounding !== undefined) options.Precision.enableStochasticRounding(engine.stochasticRounding);
  }
}
