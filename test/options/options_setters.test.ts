import { describe, expect, it } from 'vitest';
import {
  AutoStage,
  CommGroupType,
  ConnectionType,
  HalfFloatCastingBehavior,
  Liveness,
  MeanReductionStrategy,
  Options,
  OutputMode,
  PipelinedExecutionSpec,
  ReductionType,
  SyncPattern,
  TensorLocationSettings,
} from '../../lib/options/index.js';

/** Calls a setter with a value its TypeScript signature would refuse. */
function loose<T>(value: unknown): T {
  return value as T;
}

describe('Options defaults', () => {
  it('match PopTorch', () => {
    const settings = new Options({ fromEnvironment: false }).settings;
    expect(settings.deviceIterations).toBe(1);
    expect(settings.replicationFactor).toBe(1);
    expect(settings.inputReplicaGrouping).toEqual({ size: 1, type: CommGroupType.Consecutive });
    expect(settings.outputMode).toBe(OutputMode.Default);
    expect(settings.outputReturnPeriod).toBe(1);
    expect(settings.executionStrategy).toBeInstanceOf(PipelinedExecutionSpec);
    expect(settings.executionStrategy.toJSON()).toEqual({ type: 'PipelinedExecution', autoStage: AutoStage.SameAsIpu, stages: [] });
    expect(settings.connectionType).toBe(ConnectionType.Always);
    expect(settings.syncPattern).toBe(SyncPattern.Full);
    expect(settings.broadcastBuffers).toBe(true);
    expect(settings.autoRoundNumIPUs).toBe(false);
    expect(settings.randomSeed).toBeUndefined();
    expect(settings.ipuId).toBeUndefined();
    expect(settings.executableCachePath).toBeUndefined();
    expect(settings.logDir).toBeUndefined();
    expect(settings.showCompilationProgressBar).toBe(process.stderr.isTTY === true);
    expect(settings.training).toEqual({
      gradientAccumulation: 1,
      reductionType: ReductionType.Mean,
      meanReductionStrategy: MeanReductionStrategy.Post,
      automaticLossScaling: false,
    });
    expect(settings.precision).toEqual({
      partialsType: 'float',
      stochasticRounding: false,
      floatingPointExceptions: false,
      halfFloatCasting: HalfFloatCastingBehavior.HalfUpcastToFloat,
      runningStatisticsAlwaysFloat: true,
    });
    expect(settings.tensorLocations).toEqual({ activation: {}, weight: {}, optimizer: {}, accumulator: {} });
    expect(settings.distributed).toEqual({ processId: 0, numProcesses: 1 });
  });

  it('settings is a read-only snapshot', () => {
    const opts = new Options({ fromEnvironment: false });
    const before = opts.settings;
    opts.deviceIterations(3);
    expect(before.deviceIterations).toBe(1);
    expect(opts.settings.deviceIterations).toBe(3);
    expect(Object.isFrozen(before)).toBe(true);
    expect(Object.isFrozen(before.training)).toBe(true);
    expect(Object.isFrozen(before.inputReplicaGrouping)).toBe(true);
  });
});

describe('Options setters', () => {
  it('chain and record their values', () => {
    const opts = new Options({ fromEnvironment: false });
    const returned = opts
      .deviceIterations(4)
      .replicationFactor(8)
      .inputReplicaGrouping(4, CommGroupType.Orthogonal)
      .outputMode(OutputMode.EveryN, 3)
      .autoRoundNumIPUs()
      .useIpuModel(true)
      .useIpuId(5)
      .randomSeed(42)
      .enableExecutableCaching('/tmp/cache')
      .enableSyntheticData(true)
      .logDir('logs')
      .modelName('bert')
      .syncPattern(SyncPattern.ReplicaAndLadder)
      .broadcastBuffers(false)
      .anchorTensor('grad', 'Gradient___x', OutputMode.Sum)
      .relaxOptimizerAttributesChecks()
      .showCompilationProgressBar(false)
      .enableProfiling('profiles')
      .backend('cpu')
      .parallelIpus(true)
      .useOfflineIpuTarget();
    expect(returned).toBe(opts);
    const s = opts.settings;
    expect(s.deviceIterations).toBe(4);
    expect(s.replicationFactor).toBe(8);
    expect(s.inputReplicaGrouping).toEqual({ size: 4, type: 'Orthogonal' });
    expect([s.outputMode, s.outputReturnPeriod]).toEqual(['EveryN', 3]);
    expect(s.autoRoundNumIPUs).toBe(true);
    expect(s.useIpuModel).toBe(true);
    expect(s.ipuId).toBe(5);
    expect(s.randomSeed).toBe(42);
    expect(s.executableCachePath).toBe('/tmp/cache');
    expect(s.syntheticData).toBe(true);
    expect(s.logDir).toBe('logs');
    expect(s.modelName).toBe('bert');
    expect(s.syncPattern).toBe('ReplicaAndLadder');
    expect(s.broadcastBuffers).toBe(false);
    expect(s.anchoredTensors).toEqual({ grad: { longName: 'Gradient___x', outputMode: 'Sum', outputReturnPeriod: 1 } });
    expect(s.relaxOptimizerAttributesChecks).toBe(true);
    expect(s.showCompilationProgressBar).toBe(false);
    expect(s.profileDir).toBe('profiles');
    expect(s.backend).toBe('cpu');
    expect(s.parallelIpus).toBe(true);
    expect(s.offlineIpuVersion).toBe(2);
    expect(s.connectionType).toBe(ConnectionType.Never);
  });

  it('group setters chain back to their group', () => {
    const opts = new Options({ fromEnvironment: false });
    expect(
      opts.Training.gradientAccumulation(8)
        .accumulationAndReplicationReductionType(ReductionType.Sum)
        .setMeanAccumulationAndReplicationReductionStrategy(MeanReductionStrategy.Running)
        .setAutomaticLossScaling(true),
    ).toBe(opts.Training);
    expect(
      opts.Precision.setPartialsType('half')
        .enableStochasticRounding(true)
        .enableFloatingPointExceptions(true)
        .halfFloatCasting(HalfFloatCastingBehavior.FloatDowncastToHalf)
        .runningStatisticsAlwaysFloat(false),
    ).toBe(opts.Precision);
    const location = new TensorLocationSettings()
      .useOnChipStorage(false)
      .useReplicatedTensorSharding(true)
      .minElementsForOffChip(128)
      .minElementsForReplicatedTensorSharding(256)
      .useIOTilesToLoad(true)
      .useIOTilesToStore(false);
    expect(
      opts.TensorLocations.numIOTiles(64)
        .setActivationLocation(location)
        .setWeightLocation(new TensorLocationSettings().useOnChipStorage(true))
        .setOptimizerLocation(new TensorLocationSettings().useReplicatedTensorSharding())
        .setAccumulatorLocation(new TensorLocationSettings()),
    ).toBe(opts.TensorLocations);
    expect(opts.Distributed.configureProcessId(2, 4)).toBe(opts.Distributed);

    const s = opts.settings;
    expect(s.training).toEqual({ gradientAccumulation: 8, reductionType: 'Sum', meanReductionStrategy: 'Running', automaticLossScaling: true });
    expect(s.precision).toEqual({
      partialsType: 'half',
      stochasticRounding: true,
      floatingPointExceptions: true,
      halfFloatCasting: 'FloatDowncastToHalf',
      runningStatisticsAlwaysFloat: false,
    });
    expect(s.tensorLocations).toEqual({
      numIOTiles: 64,
      activation: {
        useOnChipStorage: false,
        useReplicatedTensorSharding: true,
        minElementsForOffChip: 128,
        minElementsForReplicatedTensorSharding: 256,
        useIOTilesToLoad: true,
        useIOTilesToStore: false,
      },
      weight: { useOnChipStorage: true },
      optimizer: { useReplicatedTensorSharding: true },
      accumulator: {},
    });
    expect(s.distributed).toEqual({ processId: 2, numProcesses: 4 });
    expect([opts.Distributed.processId, opts.Distributed.numProcesses]).toEqual([2, 4]);
    opts.Distributed.disable();
    expect(opts.settings.distributed).toEqual({ processId: 0, numProcesses: 1 });
  });

  it('a location set on the options does not change with its TensorLocationSettings afterwards', () => {
    const opts = new Options({ fromEnvironment: false });
    const location = new TensorLocationSettings().useOnChipStorage(false);
    opts.TensorLocations.setWeightLocation(location);
    location.useOnChipStorage(true);
    expect(opts.settings.tensorLocations.weight).toEqual({ useOnChipStorage: false });
  });

  it('enableExecutableCaching(null) disables caching', () => {
    const opts = new Options({ fromEnvironment: false }).enableExecutableCaching('/tmp/a');
    opts.enableExecutableCaching(null);
    expect(opts.settings.executableCachePath).toBeUndefined();
    expect('executableCachePath' in opts.toJSON()).toBe(false);
  });

  it('outputMode keeps a period only for EveryN, and anchors follow the same rule', () => {
    const opts = new Options({ fromEnvironment: false }).outputMode(OutputMode.EveryN, 5).outputMode(OutputMode.All);
    expect([opts.settings.outputMode, opts.settings.outputReturnPeriod]).toEqual(['All', 1]);
    opts.outputMode(OutputMode.Final, null);
    expect(opts.settings.outputMode).toBe('Final');
    opts.anchorTensor('a', 'x').anchorTensor('b', 'y', OutputMode.EveryN, 4).anchorTensor('a', 'z');
    expect(opts.settings.anchoredTensors).toEqual({
      a: { longName: 'z', outputReturnPeriod: 1 },
      b: { longName: 'y', outputMode: 'EveryN', outputReturnPeriod: 4 },
    });
  });
});

type SetterCase = readonly [call: string, run: (opts: Options) => unknown, error: typeof TypeError | typeof RangeError, message: string];

const SETTER_ERRORS: readonly SetterCase[] = [
  ['deviceIterations(0)', (o) => o.deviceIterations(0), RangeError, 'Options.deviceIterations: expected a positive integer, got 0'],
  ['deviceIterations(1.5)', (o) => o.deviceIterations(1.5), RangeError, 'Options.deviceIterations: expected a positive integer, got 1.5'],
  ['deviceIterations("4")', (o) => o.deviceIterations(loose('4')), TypeError, 'Options.deviceIterations: expected a positive integer, got "4"'],
  ['replicationFactor(-2)', (o) => o.replicationFactor(-2), RangeError, 'Options.replicationFactor: expected a positive integer, got -2'],
  ['replicationFactor(NaN)', (o) => o.replicationFactor(Number.NaN), RangeError, 'Options.replicationFactor: expected a positive integer, got NaN'],
  [
    'inputReplicaGrouping(0, ...)',
    (o) => o.inputReplicaGrouping(0, CommGroupType.All),
    RangeError,
    'Options.inputReplicaGrouping: inputGroupSize: expected a positive integer, got 0',
  ],
  [
    'inputReplicaGrouping(2, "Diagonal")',
    (o) => o.inputReplicaGrouping(2, loose('Diagonal')),
    RangeError,
    'Options.inputReplicaGrouping: inputGroupType: expected one of CommGroupType.All, CommGroupType.Consecutive, CommGroupType.Orthogonal, CommGroupType.NoGrouping, got "Diagonal"',
  ],
  [
    'outputMode("Everything")',
    (o) => o.outputMode(loose('Everything')),
    RangeError,
    'Options.outputMode: expected one of OutputMode.All, OutputMode.Final, OutputMode.EveryN, OutputMode.Sum, OutputMode.Default, got "Everything"',
  ],
  ['outputMode(EveryN)', (o) => o.outputMode(OutputMode.EveryN), RangeError, 'Options.outputMode: OutputMode.EveryN needs a return period (a positive integer), got none'],
  ['outputMode(EveryN, 0)', (o) => o.outputMode(OutputMode.EveryN, 0), RangeError, 'Options.outputMode: outputReturnPeriod: expected a positive integer, got 0'],
  [
    'setExecutionStrategy({})',
    (o) => o.setExecutionStrategy(loose({})),
    TypeError,
    'Options.setExecutionStrategy: expected an execution strategy (PipelinedExecution, ShardedExecution, SerialPhasedExecution or ParallelPhasedExecution), got the object {}',
  ],
  ['autoRoundNumIPUs("yes")', (o) => o.autoRoundNumIPUs(loose('yes')), TypeError, 'Options.autoRoundNumIPUs: expected a boolean (true or false), got "yes"'],
  ['useIpuModel(1)', (o) => o.useIpuModel(loose(1)), TypeError, 'Options.useIpuModel: expected a boolean (true or false), got 1'],
  ['useIpuId(-1)', (o) => o.useIpuId(-1), RangeError, 'Options.useIpuId: expected a non-negative integer, got -1'],
  ['useOfflineIpuTarget(3)', (o) => o.useOfflineIpuTarget(3), RangeError, 'Options.useOfflineIpuTarget: expected one of 1, 2, 21, got 3'],
  ['randomSeed(0.5)', (o) => o.randomSeed(0.5), RangeError, 'Options.randomSeed: expected a non-negative integer, got 0.5'],
  ['randomSeed(10n)', (o) => o.randomSeed(loose(10n)), TypeError, 'Options.randomSeed: expected a non-negative integer, got 10n'],
  [
    'enableExecutableCaching("")',
    (o) => o.enableExecutableCaching(''),
    RangeError,
    'Options.enableExecutableCaching: expected a non-empty string (a directory), or null to disable caching, got ""',
  ],
  ['enableSyntheticData(null)', (o) => o.enableSyntheticData(loose(null)), TypeError, 'Options.enableSyntheticData: expected a boolean (true or false), got null'],
  ['logDir(3)', (o) => o.logDir(loose(3)), TypeError, 'Options.logDir: expected a non-empty string, got 3'],
  ['modelName("")', (o) => o.modelName(''), RangeError, 'Options.modelName: expected a non-empty string, got ""'],
  [
    'connectionType("Sometimes")',
    (o) => o.connectionType(loose('Sometimes')),
    RangeError,
    'Options.connectionType: expected one of ConnectionType.Always, ConnectionType.OnDemand, ConnectionType.Never, got "Sometimes"',
  ],
  [
    'syncPattern(0)',
    (o) => o.syncPattern(loose(0)),
    TypeError,
    'Options.syncPattern: expected one of SyncPattern.Full, SyncPattern.SinglePipeline, SyncPattern.ReplicaAndLadder, got 0',
  ],
  ['broadcastBuffers("false")', (o) => o.broadcastBuffers(loose('false')), TypeError, 'Options.broadcastBuffers: expected a boolean (true or false), got "false"'],
  ['anchorTensor("", "x")', (o) => o.anchorTensor('', 'x'), RangeError, 'Options.anchorTensor: shortName: expected a non-empty string, got ""'],
  ['anchorTensor("a", 7)', (o) => o.anchorTensor('a', loose(7)), TypeError, 'Options.anchorTensor: longName: expected a non-empty string, got 7'],
  [
    'relaxOptimizerAttributesChecks(0)',
    (o) => o.relaxOptimizerAttributesChecks(loose(0)),
    TypeError,
    'Options.relaxOptimizerAttributesChecks: expected a boolean (true or false), got 0',
  ],
  [
    'showCompilationProgressBar("no")',
    (o) => o.showCompilationProgressBar(loose('no')),
    TypeError,
    'Options.showCompilationProgressBar: expected a boolean (true or false), got "no"',
  ],
  ['enableProfiling("")', (o) => o.enableProfiling(''), RangeError, 'Options.enableProfiling: expected a non-empty string, got ""'],
  ['backend("webgl")', (o) => o.backend(loose('webgl')), RangeError, 'Options.backend: expected one of "tensorflow", "wasm", "cpu", got "webgl"'],
  ['parallelIpus(undefined)', (o) => o.parallelIpus(loose(undefined)), TypeError, 'Options.parallelIpus: expected a boolean (true or false), got undefined'],
  ['Training.gradientAccumulation(0)', (o) => o.Training.gradientAccumulation(0), RangeError, 'Options.Training.gradientAccumulation: expected a positive integer, got 0'],
  [
    'Training.accumulationAndReplicationReductionType(NoReduction)',
    (o) => o.Training.accumulationAndReplicationReductionType(ReductionType.NoReduction),
    RangeError,
    'Options.Training.accumulationAndReplicationReductionType: expected one of ReductionType.Sum, ReductionType.Mean, got "NoReduction"',
  ],
  [
    'Training.setMeanAccumulationAndReplicationReductionStrategy("Later")',
    (o) => o.Training.setMeanAccumulationAndReplicationReductionStrategy(loose('Later')),
    RangeError,
    'Options.Training.setMeanAccumulationAndReplicationReductionStrategy: expected one of MeanReductionStrategy.Running, MeanReductionStrategy.Post, got "Later"',
  ],
  [
    'Training.setAutomaticLossScaling(1)',
    (o) => o.Training.setAutomaticLossScaling(loose(1)),
    TypeError,
    'Options.Training.setAutomaticLossScaling: expected a boolean (true or false), got 1',
  ],
  [
    'Precision.setPartialsType("double")',
    (o) => o.Precision.setPartialsType(loose('double')),
    RangeError,
    'Options.Precision.setPartialsType: expected "float" or "half", got "double"',
  ],
  [
    'Precision.enableStochasticRounding("on")',
    (o) => o.Precision.enableStochasticRounding(loose('on')),
    TypeError,
    'Options.Precision.enableStochasticRounding: expected a boolean (true or false), got "on"',
  ],
  [
    'Precision.enableFloatingPointExceptions(1)',
    (o) => o.Precision.enableFloatingPointExceptions(loose(1)),
    TypeError,
    'Options.Precision.enableFloatingPointExceptions: expected a boolean (true or false), got 1',
  ],
  [
    'Precision.halfFloatCasting("Default")',
    (o) => o.Precision.halfFloatCasting(loose('Default')),
    RangeError,
    'Options.Precision.halfFloatCasting: expected one of HalfFloatCastingBehavior.FloatDowncastToHalf, HalfFloatCastingBehavior.HalfUpcastToFloat, got "Default"',
  ],
  [
    'Precision.runningStatisticsAlwaysFloat(null)',
    (o) => o.Precision.runningStatisticsAlwaysFloat(loose(null)),
    TypeError,
    'Options.Precision.runningStatisticsAlwaysFloat: expected a boolean (true or false), got null',
  ],
  [
    'TensorLocations.numIOTiles(31)',
    (o) => o.TensorLocations.numIOTiles(31),
    RangeError,
    'Options.TensorLocations.numIOTiles: expected an even integer from 32 to 192, got 31',
  ],
  [
    'TensorLocations.numIOTiles(194)',
    (o) => o.TensorLocations.numIOTiles(194),
    RangeError,
    'Options.TensorLocations.numIOTiles: expected an even integer from 32 to 192, got 194',
  ],
  [
    'TensorLocations.numIOTiles(33)',
    (o) => o.TensorLocations.numIOTiles(33),
    RangeError,
    'Options.TensorLocations.numIOTiles: expected an even integer from 32 to 192, got 33',
  ],
  [
    'TensorLocations.setActivationLocation({})',
    (o) => o.TensorLocations.setActivationLocation(loose({ useOnChipStorage: false })),
    TypeError,
    'Options.TensorLocations.setActivationLocation: expected a TensorLocationSettings, got the object {"useOnChipStorage":false}',
  ],
  [
    'TensorLocations.setWeightLocation(null)',
    (o) => o.TensorLocations.setWeightLocation(loose(null)),
    TypeError,
    'Options.TensorLocations.setWeightLocation: expected a TensorLocationSettings, got null',
  ],
  [
    'TensorLocations.setOptimizerLocation("x")',
    (o) => o.TensorLocations.setOptimizerLocation(loose('x')),
    TypeError,
    'Options.TensorLocations.setOptimizerLocation: expected a TensorLocationSettings, got "x"',
  ],
  [
    'TensorLocations.setAccumulatorLocation([])',
    (o) => o.TensorLocations.setAccumulatorLocation(loose([])),
    TypeError,
    'Options.TensorLocations.setAccumulatorLocation: expected a TensorLocationSettings, got the array []',
  ],
  [
    'Distributed.configureProcessId(2, 2)',
    (o) => o.Distributed.configureProcessId(2, 2),
    RangeError,
    'Options.Distributed.configureProcessId: processId must be less than numProcesses (2), got 2',
  ],
  [
    'Distributed.configureProcessId(0, 0)',
    (o) => o.Distributed.configureProcessId(0, 0),
    RangeError,
    'Options.Distributed.configureProcessId: numProcesses: expected a positive integer, got 0',
  ],
  [
    'Distributed.configureProcessId(-1, 2)',
    (o) => o.Distributed.configureProcessId(-1, 2),
    RangeError,
    'Options.Distributed.configureProcessId: processId: expected a non-negative integer, got -1',
  ],
];

describe('Options setter validation', () => {
  it.each(SETTER_ERRORS)('%s is refused', (_call, run, errorClass, message) => {
    const opts = new Options({ fromEnvironment: false });
    const before = opts.toJSON();
    let thrown: unknown;
    try {
      run(opts);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(errorClass);
    expect((thrown as Error).message).toBe(message);
    expect(opts.toJSON()).toEqual(before);
  });

  const LOCATION_ERRORS: readonly (readonly [string, (s: TensorLocationSettings) => unknown, typeof TypeError | typeof RangeError, string])[] = [
    ['useOnChipStorage("no")', (s) => s.useOnChipStorage(loose('no')), TypeError, 'TensorLocationSettings.useOnChipStorage: expected a boolean (true or false), got "no"'],
    [
      'useReplicatedTensorSharding(1)',
      (s) => s.useReplicatedTensorSharding(loose(1)),
      TypeError,
      'TensorLocationSettings.useReplicatedTensorSharding: expected a boolean (true or false), got 1',
    ],
    ['minElementsForOffChip(-1)', (s) => s.minElementsForOffChip(-1), RangeError, 'TensorLocationSettings.minElementsForOffChip: expected a non-negative integer, got -1'],
    [
      'minElementsForReplicatedTensorSharding(2.5)',
      (s) => s.minElementsForReplicatedTensorSharding(2.5),
      RangeError,
      'TensorLocationSettings.minElementsForReplicatedTensorSharding: expected a non-negative integer, got 2.5',
    ],
    ['useIOTilesToLoad(null)', (s) => s.useIOTilesToLoad(loose(null)), TypeError, 'TensorLocationSettings.useIOTilesToLoad: expected a boolean (true or false), got null'],
    ['useIOTilesToStore("x")', (s) => s.useIOTilesToStore(loose('x')), TypeError, 'TensorLocationSettings.useIOTilesToStore: expected a boolean (true or false), got "x"'],
  ];

  it.each(LOCATION_ERRORS)('TensorLocationSettings.%s is refused', (_call, run, errorClass, message) => {
    expect(() => run(new TensorLocationSettings())).toThrow(errorClass);
    expect(() => run(new TensorLocationSettings())).toThrow(message);
  });

  it('an enum member may be written as its string value', () => {
    const opts = new Options({ fromEnvironment: false }).outputMode('All').connectionType('OnDemand');
    expect([opts.settings.outputMode, opts.settings.connectionType]).toEqual([OutputMode.All, ConnectionType.OnDemand]);
    expect(Liveness.OffChipAfterFwd).toBe('OffChipAfterFwd');
  });
});
