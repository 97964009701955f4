import { describe, expect, it } from 'vitest';
import {
  CommGroupType,
  OutputMode,
  type Options,
  PipelinedExecution,
  RecomputationType,
  SerialPhasedExecution,
  Phase,
  Stage,
  SyncPattern,
  TensorLocationSettings,
  optionsConfigText,
} from 'poptfjs';
import { configFile, fresh } from './config_test_files.js';

/** Options set in every way a config file can say. */
function everything(): Options {
  const o = fresh()
    .deviceIterations(4)
    .replicationFactor(8)
    .inputReplicaGrouping(2, CommGroupType.Orthogonal)
    .outputMode(OutputMode.EveryN, 2)
    .autoRoundNumIPUs(true)
    .randomSeed(42)
    .enableSyntheticData(true)
    .modelName('encoder "v2"')
    .syncPattern(SyncPattern.SinglePipeline)
    .broadcastBuffers(false)
    .anchorTensor('grad', 'layer1/kernel', OutputMode.Sum)
    .patterns('Minimal', { TransposeSinking: true })
    .ipuTarget({ ipu: 'Bow', tiles: 1024 })
    .autoRecomputation(RecomputationType.Pipeline)
    .setAvailableMemoryProportion({ IPU0: 0.2, IPU1: 0.45 })
    .setExecutionStrategy(PipelinedExecution(Stage('embeddings', 'layer0').ipu(0), Stage('layer1', 'heads').ipu(1)));
  o.Training.gradientAccumulation(510).accumulationAndReplicationReductionType('Sum').setAutomaticLossScaling(true);
  o.Precision.setPartialsType('half').enableStochasticRounding(true);
  o.TensorLocations.numIOTiles(32)
    .setOptimizerLocation(new TensorLocationSettings().useOnChipStorage(false).useReplicatedTensorSharding(true))
    .setWeightLocation(new TensorLocationSettings().minElementsForOffChip(1024));
  return o;
}

describe('optionsConfigText', () => {
  it('writes options as a PopTorch config file that loadFromFile reads back into the same options', () => {
    const options = everything();
    const text = optionsConfigText(options);
    expect(fresh().loadFromFile(configFile(text)).toJSON()).toEqual(options.toJSON());
    expect(text).toContain('setAvailableMemoryProportion({"IPU0": 0.2, "IPU1": 0.45})\n');
    expect(text).toContain('setExecutionStrategy(PipelinedExecution(Stage("embeddings", "layer0").ipu(0), Stage("layer1", "heads").ipu(1)))\n');
    expect(text).toContain('TensorLocations.setOptimizerLocation(TensorLocationSettings().useOnChipStorage(False).useReplicatedTensorSharding(True))\n');
    expect(text).toContain('ipuTarget({"ipu": "Bow", "tiles": 1024})\n');
  });

  it('leaves out what the defaults give: default options are an empty file', () => {
    expect(optionsConfigText(fresh())).toBe('\n');
    expect(optionsConfigText(fresh().ipuTarget('Bow').deviceIterations(2))).toBe('deviceIterations(2)\nipuTarget("Bow")\n');
  });

  it('round-trips a phased strategy', () => {
    const options = fresh().setExecutionStrategy(SerialPhasedExecution(Phase(Stage('A').ipu(0)), Phase(Stage('B').ipu(0))));
    expect(
      fresh()
        .loadFromFile(configFile(optionsConfigText(options)))
        .toJSON(),
    ).toEqual(options.toJSON());
  });
});

describe('dicts in config files', () => {
  it('are Python dicts: string or number keys, any values, a trailing comma', () => {
    const o = fresh().loadFromFile(configFile('setAvailableMemoryProportion({"IPU0": 0.3, \'IPU1\': 0.5,})\nipuTarget({"ipu": "Bow"})\n'));
    expect(o.settings.availableMemoryProportion).toEqual({ 0: 0.3, 1: 0.5 });
    expect(o.settings.ipuTarget).toEqual({ ipu: 'Bow' });
  });

  it('refuses a repeated key, a key that is not a string or number, and a missing colon, naming line and column', () => {
    expect(() => fresh().loadFromFile(configFile('setAvailableMemoryProportion({"IPU0": 0.3, "IPU0": 0.5})\n'))).toThrow(/:1:44: the dict has the key "IPU0" twice/);
    expect(() => fresh().loadFromFile(configFile('setAvailableMemoryProportion({[1]: 0.3})\n'))).toThrow(/a dict key must be a string or a number, got/);
    expect(() => fresh().loadFromFile(configFile('setAvailableMemoryProportion({"IPU0" 0.3})\n'))).toThrow(/expected ":"/);
  });

  it('holds "__proto__" as a key like any other', () => {
    expect(() => fresh().loadFromFile(configFile('setAvailableMemoryProportion({"__proto__": 0.3})\n'))).toThrow(
      /keys must name IPUs as 'IPU0', 'IPU1', ...; got '__proto__'/,
    );
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
