import { describe, expect, it } from 'vitest';
import { PoptfjsError } from '../../lib/common/errors.js';
import {
  CommGroupType,
  Liveness,
  Options,
  OptionsDataError,
  OutputMode,
  Phase,
  ReductionType,
  RUNTIME_OPTION_KEYS,
  SerialPhasedExecution,
  ShardedExecution,
  Stage,
  TensorLocationSettings,
} from '../../lib/options/index.js';

/** Options with every value changed from its default. */
function everythingSet(): Options {
  const opts = new Options({ fromEnvironment: false })
    .deviceIterations(3)
    .replicationFactor(4)
    .inputReplicaGrouping(2, CommGroupType.Orthogonal)
    .outputMode(OutputMode.EveryN, 2)
    .setExecutionStrategy(
      SerialPhasedExecution(Phase(Stage('A').ipu(0), Stage('B').ipu(1)), [Stage('C', 'D').ipu(0)])
        .useSeparateBackwardPhase()
        .setTensorsLiveness(Liveness.OffChipAfterEachPhase),
    )
    .autoRoundNumIPUs()
    .useIpuModel(true)
    .useIpuId(7)
    .useOfflineIpuTarget(21)
    .randomSeed(1234)
    .enableExecutableCaching('/tmp/cache')
    .enableSyntheticData(true)
    .logDir('/tmp/logs')
    .modelName('net')
    .connectionType('OnDemand')
    .syncPattern('SinglePipeline')
    .broadcastBuffers(false)
    .anchorTensor('a', 'x/y')
    .anchorTensor('b', 'z', OutputMode.EveryN, 5)
    .anchorTensor('c', 'w', OutputMode.Final)
    .updatableNamedBuffers(['running_mean', 'running_var'])
    .relaxOptimizerAttributesChecks()
    .showCompilationProgressBar(!process.stderr.isTTY)
    .enableProfiling('/tmp/profile')
    .backend('wasm')
    .parallelIpus(true)
    .patterns('All', { TransposedMatMul: false })
    .ipuTarget({ tiles: 4, memoryPerTile: 1024 })
    .allowOutOfMemory(true)
    .autoRecomputation('Standard')
    .setAvailableMemoryProportion({ IPU0: 0.3, IPU2: 0.5 });
  opts.Training.gradientAccumulation(6)
    .accumulationAndReplicationReductionType(ReductionType.Sum)
    .setMeanAccumulationAndReplicationReductionStrategy('Running')
    .setAutomaticLossScaling(true);
  opts.Precision.setPartialsType('half')
    .enableStochasticRounding(true)
    .enableFloatingPointExceptions(true)
    .halfFloatCasting('FloatDowncastToHalf')
    .runningStatisticsAlwaysFloat(false);
  opts.TensorLocations.numIOTiles(128)
    .setActivationLocation(new TensorLocationSettings().useOnChipStorage(false).minElementsForOffChip(10))
    .setWeightLocation(new TensorLocationSettings().useReplicatedTensorSharding().minElementsForReplicatedTensorSharding(20))
    .setOptimizerLocation(new TensorLocationSettings().useIOTilesToLoad().useIOTilesToStore())
    .setAccumulatorLocation(new TensorLocationSettings().useOnChipStorage(true));
  opts.Distributed.configureProcessId(1, 3);
  return opts;
}

describe('toJSON / fromJSON', () => {
  it('round-trips the defaults exactly', () => {
    const opts = new Options({ fromEnvironment: false });
    expect(Options.fromJSON(opts.toJSON()).toJSON()).toStrictEqual(opts.toJSON());
  });

  it('round-trips every option and strategy exactly, through JSON text', () => {
    const opts = everythingSet();
    const json = opts.toJSON();
    const rebuilt = Options.fromJSON(JSON.parse(JSON.stringify(json)));
    expect(rebuilt.toJSON()).toStrictEqual(json);
    expect(JSON.parse(JSON.stringify(json))).toStrictEqual(json);
    expect(rebuilt.toString()).toBe(opts.toString());
  });

  it('every default differs from everythingSet(), so the round trip covers every key', () => {
    const defaults = new Options({ fromEnvironment: false }).toJSON() as unknown as Record<string, unknown>;
    const set = everythingSet().toJSON() as unknown as Record<string, unknown>;
    for (const key of new Set([...Object.keys(defaults), ...Object.keys(set)])) {
      expect(set[key], key).not.toEqual(defaults[key]);
    }
  });

  it('accepts partial data and keeps the defaults for the rest', () => {
    const opts = Options.fromJSON({ deviceIterations: 4, training: { gradientAccumulation: 2 }, executionStrategy: { type: 'ShardedExecution' } });
    expect(opts.settings.deviceIterations).toBe(4);
    expect(opts.settings.training.gradientAccumulation).toBe(2);
    expect(opts.settings.training.reductionType).toBe('Mean');
    expect(opts.settings.executionStrategy.type).toBe('ShardedExecution');
  });

  it('refuses unknown keys and bad values, naming their path', () => {
    const cases = [
      [{ deviceIteration: 4 }, ['deviceIteration'], 'deviceIteration: unknown key "deviceIteration"'],
      [{ training: { gradAccum: 2 } }, ['training', 'gradAccum'], 'training.gradAccum: unknown key "gradAccum"'],
      [{ replicationFactor: 0 }, ['replicationFactor'], 'replicationFactor: Options.replicationFactor: expected a positive integer, got 0'],
      [{ training: { gradientAccumulation: '2' } }, ['training', 'gradientAccumulation'], 'expected a positive integer, got "2"'],
      [{ tensorLocations: { weight: { useOnChipStorage: 1 } } }, ['tensorLocations', 'weight', 'useOnChipStorage'], 'TensorLocationSettings.useOnChipStorage'],
      [
        { executionStrategy: { type: 'ShardedExecution', stages: [{ blocks: ['A'], ipu: 'one' }] } },
        ['executionStrategy', 'stages', 0, 'ipu'],
        'executionStrategy.stages[0].ipu',
      ],
      [{ outputMode: 'EveryN' }, ['outputMode'], 'OutputMode.EveryN needs a return period'],
      [{ distributed: { processId: 3 } }, ['distributed'], 'processId must be less than numProcesses (1), got 3'],
      [[1, 2], [], 'options data must be an object'],
    ] as const;
    for (const [data, path, message] of cases) {
      let thrown: unknown;
      try {
        Options.fromJSON(data);
      } catch (error) {
        thrown = error;
      }
      expect(thrown, JSON.stringify(data)).toBeInstanceOf(OptionsDataError);
      expect((thrown as OptionsDataError).path, JSON.stringify(data)).toEqual(path);
      expect((thrown as Error).message).toContain(message);
    }
  });

  it('ignores POPTFJS_DEFAULT_OPTIONS', () => {
    process.env.POPTFJS_DEFAULT_OPTIONS = '{"deviceIterations": 9}';
    try {
      expect(Options.fromJSON({}).settings.deviceIterations).toBe(1);
    } finally {
      delete process.env.POPTFJS_DEFAULT_OPTIONS;
    }
  });
});

describe('freeze and clone', () => {
  it('freezing makes every setter throw a PoptfjsError pointing to clone()', () => {
    const strategy = ShardedExecution(Stage('A'));
    const location = new TensorLocationSettings();
    const opts = new Options({ fromEnvironment: false }).setExecutionStrategy(strategy).freeze();
    expect(opts.isFrozen()).toBe(true);
    const setters: (() => unknown)[] = [
      () => opts.deviceIterations(2),
      () => opts.outputMode(OutputMode.All),
      () => opts.setExecutionStrategy(ShardedExecution()),
      () => opts.anchorTensor('a', 'b'),
      () => opts.enableExecutableCaching(null),
      () => opts.loadFromFile('/does/not/matter'),
      () => opts.Training.gradientAccumulation(2),
      () => opts.Precision.setPartialsType('half'),
      () => opts.TensorLocations.setWeightLocation(location),
      () => opts.Distributed.disable(),
    ];
    for (const setter of setters) {
      expect(setter).toThrow(PoptfjsError);
      expect(setter).toThrow(/are frozen \(a wrapped model or a DataLoader uses them\) .* call clone\(\) on the options/);
    }
    expect(() => opts.deviceIterations(2)).toThrow(/^Options\.deviceIterations: /);
    expect(() => opts.Training.gradientAccumulation(2)).toThrow(/^Options\.Training\.gradientAccumulation: /);
  });

  it('freezing also freezes the strategy the options hold', () => {
    const strategy = SerialPhasedExecution(Phase(Stage('A'), Stage('B')));
    const opts = new Options({ fromEnvironment: false }).setExecutionStrategy(strategy);
    strategy.phase(0).ipus(0, 1);
    expect(opts.toJSON().executionStrategy).toEqual(strategy.toJSON());
    opts.freeze();
    expect(strategy.isFrozen()).toBe(true);
    expect(() => strategy.phase(0).ipus(2, 3)).toThrow(PoptfjsError);
    expect(() => strategy.phase(0).stage(0).ipu(4)).toThrow(/belongs to frozen options \(a wrapped model or a DataLoader uses them\)/);
    expect(() => strategy.useSeparateBackwardPhase()).toThrow(PoptfjsError);
    expect(strategy.phase(0).stages.map((stage) => stage.ipuId)).toEqual([0, 1]);
  });

  it('settings are a new snapshot while the options change, and one snapshot once they are frozen', () => {
    const opts = new Options({ fromEnvironment: false }).deviceIterations(2);
    const before = opts.settings;
    opts.deviceIterations(5);
    expect(before.deviceIterations).toBe(2);
    expect(opts.settings.deviceIterations).toBe(5);
    expect(opts.settings).not.toBe(opts.settings);
    opts.freeze();
    const frozen = opts.settings;
    expect(opts.settings).toBe(frozen);
    expect(Object.isFrozen(frozen) && Object.isFrozen(frozen.training)).toBe(true);
    expect(() => opts.Training.gradientAccumulation(3)).toThrow(PoptfjsError);
    expect(opts.settings.training.gradientAccumulation).toBe(1);
    expect(opts.clone().deviceIterations(7).settings.deviceIterations).toBe(7);
  });

  it('clone() is a deep, unfrozen copy', () => {
    const original = everythingSet().freeze();
    const copy = original.clone();
    expect(copy.isFrozen()).toBe(false);
    expect(copy.toJSON()).toStrictEqual(original.toJSON());
    expect(copy.settings.executionStrategy).not.toBe(original.settings.executionStrategy);
    expect(copy.settings.executionStrategy.isFrozen()).toBe(false);
    copy.deviceIterations(11).Training.gradientAccumulation(12);
    copy.anchorTensor('d', 'q');
    const strategy = copy.settings.executionStrategy;
    if (strategy.type !== 'SerialPhasedExecution') throw new Error('unexpected strategy');
    strategy.phase(0).ipus(5, 6);
    expect(original.settings.deviceIterations).toBe(3);
    expect(original.settings.training.gradientAccumulation).toBe(6);
    expect(Object.keys(original.settings.anchoredTensors)).toEqual(['a', 'b', 'c']);
    expect(original.toJSON().executionStrategy).not.toEqual(strategy.toJSON());
  });
});

describe('toString', () => {
  it('reports every value, marking runtime-only options', () => {
    const report = everythingSet().freeze().toString();
    expect(report.split('\n')[0]).toBe('Options (frozen):');
    expect(report).toContain('  deviceIterations: 3\n');
    expect(report).toContain('  inputReplicaGrouping: size 2, Orthogonal\n');
    expect(report).toContain(
      '  executionStrategy: SerialPhasedExecution(Phase(Stage("A").ipu(0), Stage("B").ipu(1)), Phase(Stage("C", "D").ipu(0))).useSeparateBackwardPhase(true).setTensorsLiveness(Liveness.OffChipAfterEachPhase)\n',
    );
    expect(report).toContain('  ipuId: 7  (runtime)\n');
    expect(report).toContain('  anchoredTensors: a = "x/y" (as outputs); b = "z" (EveryN every 5); c = "w" (Final)\n');
    expect(report).toContain('  Training:\n    gradientAccumulation: 6\n');
    expect(report).toContain('    activation: useOnChipStorage=false, minElementsForOffChip=10\n');
    expect(report).toContain('  Distributed:\n    processId: 1  (runtime)\n    numProcesses: 3  (runtime)');
    for (const key of RUNTIME_OPTION_KEYS.filter((k) => k !== 'distributed')) expect(report).toMatch(new RegExp(`  ${key}: .*  \\(runtime\\)`));
    expect(new Options({ fromEnvironment: false }).toString()).toContain('  randomSeed: (unset)\n');
  });
});
