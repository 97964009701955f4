import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { AutoStage, BeginBlock, Options, PipelinedExecution, autoPlan, plan, tf, type AutoPlan } from 'poptfjs';

const WIDTH = 256;

/**
 * Six dense layers, each a block of its own (so a configuration's stages name blocks the model has), on the IPU
 * `ipuOf` gives it if any.
 */
function mlp(ipuOf?: (layer: number) => number): tf.LayersModel {
  const layers = Array.from({ length: 6 }, (_, i) => tf.layers.dense({ units: WIDTH, activation: 'relu', name: `dense_${i}`, ...(i === 0 ? { inputShape: [WIDTH] } : {}) }));
  layers.forEach((layer, i) => BeginBlock(layer, { userId: `block_${i}`, ...(ipuOf ? { ipuId: ipuOf(i) } : {}) }));
  return tf.sequential({ layers });
}
const build = () => mlp();

const TRAINING = { loss: 'meanSquaredError', optimizer: 'adam', inputs: [{ shape: [WIDTH] }], target: { shape: [WIDTH] } } as const;

/** An IPU of 32 tiles × 64 KiB (2 MiB): the MLP with Adam does not fit one. */
const SMALL_IPU = { tiles: 32, memoryPerTile: 64 * 1024 } as const;

describe('autoPlan()', () => {
  let roomy: AutoPlan;
  let tight: AutoPlan;
  beforeAll(async () => {
    roomy = await autoPlan(build, { ipus: 4, globalBatch: 64, ...TRAINING });
    tight = await autoPlan(build, { ipus: 4, globalBatch: 64, ...TRAINING, options: new Options().ipuTarget(SMALL_IPU) });
  }, 120_000);

  it('finds the known-better configuration: a small model is faster replicated over the IPUs than pipelined across them', async () => {
    expect(roomy.best).toBeDefined();
    expect(roomy.best!.ipusPerReplica).toBe(1);
    expect(roomy.best!.replicas).toBe(4);
    expect(roomy.best!.recomputation).toBe('None');
    expect(roomy.best!.optimizerState).toBe('on chip');
    // The same model pipelined over the 4 IPUs, as a user might write it, at the same global batch: slower.
    const pipelined = new Options().setExecutionStrategy(PipelinedExecution(AutoStage.AutoIncrement));
    pipelined.Training.gradientAccumulation(8);
    const byHand = await plan(() => mlp((i) => Math.floor((i * 4) / 6)), {
      options: pipelined,
      ...TRAINING,
      inputs: [{ shape: [8, WIDTH] }],
      target: { shape: [8, WIDTH] },
    });
    expect(byHand.fits).toBe(true);
    expect(roomy.best!.throughput).toBeGreaterThan(byHand.throughput);
  });

  it('keeps a model that does not fit one IPU off one IPU: every configuration of one IPU a replica is rejected, the best is a pipeline that fits', () => {
    expect(tight.best).toBeDefined();
    expect(tight.best!.ipusPerReplica).toBeGreaterThan(1);
    expect(tight.rejected.filter((c) => c.ipusPerReplica === 1).length).toBeGreaterThan(0);
    expect(tight.candidates.filter((c) => c.ipusPerReplica === 1)).toEqual([]);
  });

  it('returns only configurations that fit, ranked by throughput, each with the global batch it was asked for', () => {
    for (const search of [roomy, tight]) {
      expect(search.candidates.length).toBeGreaterThan(1);
      expect(search.best).toBe(search.candidates[0]);
      for (const c of search.candidates) {
        expect(c.fits).toBe(true);
        for (const ipu of c.plan.memory.ipus) expect(ipu.used).toBeLessThanOrEqual(ipu.capacity);
        expect(c.microBatch * c.replicas * c.gradientAccumulation).toBe(64);
        expect(c.replicas * c.ipusPerReplica).toBe(4);
        expect(c.throughput).toBe(c.plan.throughput);
      }
      const throughputs = search.candidates.map((c) => c.throughput);
      expect(throughputs).toEqual([...throughputs].sort((a, b) => b - a));
      for (const c of search.rejected) expect(c.plan.memory.ipus.some((ipu) => ipu.used > ipu.capacity)).toBe(true);
    }
  });

  it('says why the best wins: the next best and what they differ in, and the neighbours that do not fit', () => {
    const next = tight.candidates[1]!;
    expect(tight.why).toContain(`the fastest of the ${tight.candidates.length} configuration(s) that fit`);
    expect(tight.why).toContain(`The next best, ${next.throughput.toFixed(1)} samples/s`);
    const faster = tight.rejected.filter((c) => c.throughput > tight.best!.throughput);
    expect(faster.length).toBeGreaterThan(0);
    expect(tight.why).toMatch(/Not faster because it does not fit: .+ \([\d.]+ samples\/s\) needs [\d.]+ (KiB|MiB) on IPU \d, \d+% of it\./);
    expect(tight.summary()).toContain(`best: ${tight.best!.describe()}`);
  });

  it("prints each candidate's options as a PopTorch config file that loadFromFile reads back into the same options, and plans the same", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'poptfjs-search-'));
    for (const c of [tight.best!, roomy.best!, ...tight.candidates.slice(1, 3)]) {
      const path = join(dir, 'best.conf');
      writeFileSync(path, c.configText());
      const loaded = new Options().loadFromFile(path);
      expect(loaded.toJSON()).toEqual(c.options.toJSON());
    }
    const config = tight.best!.configText();
    expect(config).toMatch(/^setExecutionStrategy\(PipelinedExecution\(Stage\("block_0"/m);
    expect(config).toMatch(/^setAvailableMemoryProportion\(\{"IPU0": [\d.]+/m);
    expect(config).toMatch(/^ipuTarget\(\{"tiles": 32, "memoryPerTile": 65536\}\)$/m);
    // The configuration, loaded from its file, plans the model at the throughput the search found.
    const path = join(dir, 'again.conf');
    writeFileSync(path, config);
    const best = tight.best!;
    const again = await plan(build, {
      options: new Options().loadFromFile(path),
      ...TRAINING,
      inputs: [{ shape: [best.microBatch, WIDTH] }],
      target: { shape: [best.microBatch, WIDTH] },
    });
    expect(again.fits).toBe(true);
    expect(again.throughput).toBeCloseTo(best.throughput, 6);
  });

  it('splits a model without blocks between its layers, which tfjs names anew each time the model is built', async () => {
    // Unnamed layers: each build makes dense_<n> with a new n, and the search traces the model at several micro-batch sizes.
    const unnamed = () =>
      tf.sequential({ layers: Array.from({ length: 6 }, (_, i) => tf.layers.dense({ units: WIDTH, activation: 'relu', ...(i === 0 ? { inputShape: [WIDTH] } : {}) })) });
    const search = await autoPlan(unnamed, { ipus: 4, globalBatch: 64, ...TRAINING, options: new Options().ipuTarget(SMALL_IPU), space: { microBatch: [1, 2, 4, 8] } });
    expect(search.traces).toBeGreaterThan(1);
    expect(search.best).toBeDefined();
    const [first, ...rest] = search.best!.split.stages;
    expect([...first!, ...rest.flat()]).toHaveLength(6);
    expect(first![0]).toMatch(/^dense_Dense\d+$/);
    for (const c of search.candidates) expect(c.split.stages.flat()).toEqual(search.best!.split.stages.flat());
  });

  it('searches only the space it is given, and refuses a malformed request with what is expected', async () => {
    const narrow = await autoPlan(build, {
      ipus: 4,
      globalBatch: 64,
      ...TRAINING,
      space: { ipusPerReplica: [2], microBatch: [4], deviceIterations: [1], recomputation: ['None'] },
    });
    for (const c of [...narrow.candidates, ...narrow.rejected]) {
      expect([c.ipusPerReplica, c.microBatch, c.deviceIterations, c.recomputation]).toEqual([2, 4, 1, 'None']);
    }
    await expect(autoPlan(build, { ipus: 3, globalBatch: 64, ...TRAINING, space: { ipusPerReplica: [2] } })).rejects.toThrow(
      /autoPlan: space.ipusPerReplica has 2, which does not divide the 3 IPUs/,
    );
    await expect(autoPlan(build, { ipus: 0, globalBatch: 64, ...TRAINING })).rejects.toThrow(/autoPlan: ipus must be a positive integer, got 0/);
    await expect(autoPlan(build, { ipus: 4, globalBatch: 64, ...TRAINING, space: { recomputation: ['Sometimes' as never] } })).rejects.toThrow(
      /space.recomputation must be a non-empty list of None, Standard, NormOnly, Pipeline, RecomputeAll/,
    );
    await expect(autoPlan(build, { ipus: 4, globalBatch: 64, ...TRAINING, space: { tiles: [1] } as never })).rejects.toThrow(/unknown space key\(s\) tiles/);
  });

  it('refuses to replicate a model that writes buffers while they are broadcast, as PopTorch refuses it, and replicates it with buffers per replica', async () => {
    const withBatchNorm = () =>
      tf.sequential({
        layers: [
          tf.layers.dense({ units: 64, inputShape: [64], name: 'bn_dense' }),
          tf.layers.batchNormalization({ name: 'bn' }),
          tf.layers.dense({ units: 64, name: 'bn_out' }),
        ],
      });
    const request = { ipus: 2, globalBatch: 16, loss: 'meanSquaredError', optimizer: 'sgd', inputs: [{ shape: [64] }], target: { shape: [64] } } as const;
    await expect(autoPlan(withBatchNorm, request)).rejects.toThrow(
      /autoPlan: the model writes buffers \('bn\/moving_mean', 'bn\/moving_variance'\), which PopTorch does not broadcast between replicas; search with options: new Options\(\)\.broadcastBuffers\(false\)/,
    );
    const perReplica = await autoPlan(withBatchNorm, { ...request, options: new Options().broadcastBuffers(false) });
    expect(perReplica.best).toBeDefined();
    expect(perReplica.candidates.some((c) => c.replicas === 2)).toBe(true);
    const oneReplica = await autoPlan(withBatchNorm, { ...request, space: { ipusPerReplica: [2] } });
    expect(oneReplica.candidates.every((c) => c.replicas === 1)).toBe(true);
  }, 120_000);
});
