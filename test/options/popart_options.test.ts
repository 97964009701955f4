/**
 * `opts._Popart`: PopTorch's escape hatch to PopART's session options and
 * patterns, mapped onto poptfjs's options. Written from PopTorch's
 * tests/options_test.py (test_set_popart_options, test_popart_patterns):
 * the options poptfjs has are set, the others refused saying why, unknown
 * names refused as PopTorch refuses them.
 */
import { describe, expect, it } from 'vitest';
import { Options, PoptfjsError } from 'poptfjs';

describe('Options._Popart', () => {
  it('sets the PopART session options poptfjs has on the options they are', () => {
    const opts = new Options({ fromEnvironment: false });
    opts._Popart
      .set('autoRecomputation', 1)
      .set('enableStochasticRounding', true)
      .set('enableFloatingPointChecks', true)
      .set('accumulationAndReplicationReductionType', 1)
      .set('meanAccumulationAndReplicationReductionStrategy', 0)
      .set('automaticLossScalingSettings.enabled', true)
      .set('partialsTypeMatMuls', 'half')
      .set('numIOTiles', 32)
      .set('updatableNamedBuffers', new Set(['t1', 't2']))
      .set('syntheticDataMode', 2)
      .set('engineOptions', { 'debug.allowOutOfMemory': 'true', 'prng.seed': '7' })
      .set('cachePath', '/tmp/poptfjs-popart-cache')
      .set('enableEngineCaching', true)
      .set('instrumentWithHardwareCycleCounter', true);
    const s = opts.settings;
    expect(s.autoRecomputation).toBe('Standard');
    expect([s.precision.stochasticRounding, s.precision.floatingPointExceptions, s.precision.partialsType]).toEqual([true, true, 'half']);
    expect([s.training.reductionType, s.training.meanReductionStrategy, s.training.automaticLossScaling]).toEqual(['Mean', 'Running', true]);
    expect(s.tensorLocations.numIOTiles).toBe(32);
    expect(s.updatableNamedBuffers).toEqual(['t1', 't2']);
    expect([s.syntheticData, s.allowOutOfMemory, s.randomSeed, s.executableCachePath]).toEqual([true, true, 7, '/tmp/poptfjs-popart-cache']);
    opts._Popart.set('enableEngineCaching', false).set('syntheticDataMode', 0);
    expect([opts.settings.executableCachePath, opts.settings.syntheticData]).toEqual([undefined, false]);
  });

  it('refuses what PopTorch sets itself, what the simulated IPU does not model, unknown names and bad values', () => {
    const popart = new Options({ fromEnvironment: false })._Popart;
    expect(() => popart.set('replicatedGraphCount', 2)).toThrow(
      "Options._Popart.set('replicatedGraphCount'): PopTorch sets PopART's replicatedGraphCount from its own options; use Options.replicationFactor",
    );
    expect(() => popart.set('enableOutlining', true)).toThrow(
      "Options._Popart.set('enableOutlining'): PopART's session option enableOutlining tunes what the simulated IPU does not model",
    );
    expect(() => popart.set('batchSerializationSettings.factor', 1)).toThrow(/does not model/);
    expect(() => popart.set('enableOutlinning', true)).toThrow("Options._Popart.set('enableOutlinning'): Unknown bool option enableOutlinning");
    expect(() => popart.set('foo', 1)).toThrow('Unknown uint64 option foo');
    expect(() => popart.set('autoRecomputation', 7)).toThrow(
      "Options._Popart.set('autoRecomputation'): expected one of 0 (None), 1 (Standard), 2 (NormOnly), 3 (Pipeline), 4 (RecomputeAll), got 7",
    );
    expect(() => popart.set('syntheticDataMode', 1)).toThrow(/the simulated IPU does not generate zeros or uniform data/);
    expect(() => popart.set('engineOptions', { 'debug.allowOutOfMemry': 'true' })).toThrow(PoptfjsError);
    expect(() => popart.set('instrumentWithHardwareCycleCounter', false)).toThrow(/always counts the cycles/);
  });

  it("sets the patterns level and poptfjs's patterns; PopART's own patterns and unknown names are refused (test_popart_patterns)", () => {
    const opts = new Options({ fromEnvironment: false });
    opts._Popart.setPatterns({ TransposeSinking: false }, 3);
    expect(opts.settings.patterns).toEqual({ level: 'All', overrides: { TransposeSinking: false } });
    opts._Popart.setPatterns({}, 0);
    expect(opts.settings.patterns).toEqual({ level: 'NoPatterns', overrides: {} });
    expect(() => opts._Popart.setPatterns({ PadSum: true }, 0)).toThrow(
      "Options._Popart.setPatterns: PopART's pattern PadSum rewrites PopART's graph, which poptfjs does not have; poptfjs's patterns are",
    );
    expect(() => opts._Popart.setPatterns({ PadSun: true })).toThrow(/^Options._Popart.setPatterns: Unknown pattern PadSun; poptfjs's patterns are/);
    expect(() => opts._Popart.setPatterns({}, 4)).toThrow('Options._Popart.setPatterns: level must be 0 (NoPatterns), 1 (Minimal), 2 (Default) or 3 (All), got 4');
  });

  it('is refused on frozen options', () => {
    const opts = new Options({ fromEnvironment: false }).freeze();
    expect(() => opts._Popart.set('enableStochasticRounding', true)).toThrow(/these options are frozen/);
  });
});
