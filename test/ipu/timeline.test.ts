import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { Block, Options, PipelinedExecution, ShardedExecution, Stage, inferenceModel, optim, trainingModel } from 'poptfjs';

/** A target whose links, host I/O and syncs across IPUs cost nothing, so only the IPUs' own work shows. */
const COMPUTE_ONLY = { ipuLinkBandwidth: 1e30, hostLinkBandwidth: 1e30, syncHopLatency: 0 };

function balancedModel(stages: number) {
  const layers = Array.from({ length: stages }, (_, i) => {
    const l = tf.layers.dense({ units: 64, inputShape: [64], useBias: false, kernelInitializer: tf.initializers.glorotUniform({ seed: i }) });
    l.apply(tf.zeros([1, 64]));
    return l;
  });
  return (x: tf.Tensor) => {
    layers.forEach((layer, i) => {
      x = Block.run({ userId: `s${i}`, ipuId: i }, () => layer.apply(x) as tf.Tensor);
    });
    return x;
  };
}

describe('simulated timeline', () => {
  it('idles (S-1)/(M+S-1) of the time in a balanced S-stage pipeline over M micro-batches', async () => {
    for (const [S, M] of [
      [2, 4],
      [4, 8],
      [4, 4],
    ] as const) {
      const executor = inferenceModel(balancedModel(S), { options: new Options().deviceIterations(M).ipuTarget(COMPUTE_ONLY) });
      await executor.compile(tf.ones([M, 64]));
      const { timeline } = executor.executable.hardware;
      expect(timeline.bubbleFraction).toBeCloseTo((S - 1) / (M + S - 1), 10);
      expect(executor.executable.schedule.steps).toHaveLength(M + S - 1);
      for (const ipu of timeline.ipus) expect((ipu.compute + ipu.exchange + ipu.sync) / timeline.duration).toBeCloseTo(M / (M + S - 1), 10);
    }
  });

  it('keeps one IPU busy at a time when sharded', async () => {
    const executor = inferenceModel(balancedModel(4), {
      options: new Options().deviceIterations(3).setExecutionStrategy(ShardedExecution()).ipuTarget(COMPUTE_ONLY),
    });
    await executor.compile(tf.ones([3, 64]));
    const compute = executor.executable.hardware.timeline.segments.filter((s) => s.kind === 'compute');
    for (const a of compute) {
      const overlapping = compute.filter((b) => b !== a && b.start < a.end && a.start < b.end);
      expect(overlapping).toEqual([]);
    }
    expect(executor.executable.hardware.timeline.bubbleFraction).toBeCloseTo(3 / 4, 10);
  });

  it('adds the all-reduce of the gradients when replicated: 2(R-1)/R of the gradient bytes over two of the ten IPU-Links', async () => {
    const link = 1e9;
    const duration = async (replicas: number) => {
      const model = tf.sequential({ layers: [tf.layers.dense({ units: 32, inputShape: [32], useBias: false })] });
      const o = new Options().replicationFactor(replicas).ipuTarget({ ...COMPUTE_ONLY, ipuLinkBandwidth: link });
      const executor = trainingModel(model, { options: o, loss: 'meanSquaredError', optimizer: new optim.SGD(model, { lr: 0.1 }) });
      await executor.compile(tf.ones([replicas * 2, 32]), tf.ones([replicas * 2, 32]));
      return executor.executable.hardware.timeline;
    };
    const one = await duration(1);
    const two = await duration(2);
    const gradientBytes = 32 * 32 * 4;
    expect(two.duration - one.duration).toBeCloseTo((((2 * (2 - 1)) / 2) * gradientBytes) / (link * (2 / 10)), 12);
    expect(two.segments.filter((s) => s.kind === 'all-reduce')).toHaveLength(1);
    expect(two.throughput).toBeCloseTo(4 / two.duration, 6);
  });

  it('charges copies between IPUs and syncs between steps on the default target', async () => {
    const executor = inferenceModel(balancedModel(2), { options: new Options().deviceIterations(2) });
    await executor.compile(tf.ones([2, 64]));
    const { timeline } = executor.executable.hardware;
    expect(timeline.segments.some((s) => s.kind === 'exchange' && s.ipu === 1)).toBe(true);
    // Three steps, each ending with a sync across the two IPUs: one hop within a card, there and back, 15 ns a hop.
    const syncs = timeline.segments.filter((s) => s.kind === 'sync' && s.ipu === 0 && s.label === 'sync');
    expect(syncs).toHaveLength(3);
    for (const s of syncs) expect(s.end - s.start).toBeCloseTo(2 * 15e-9, 15);
    // The 64 activations (256 bytes) crossing to IPU 1 go over the four links within the card: 4/10 of 320 GB/s.
    const copy = timeline.segments.find((s) => s.kind === 'exchange' && s.ipu === 1)!;
    expect(copy.end - copy.start).toBeGreaterThanOrEqual((64 * 4) / 128e9);
    expect(timeline.cycles).toBe(Math.round(timeline.duration * 1.33e9));
  });

  it('answers cycleCount, getComputeLatency and compilationTime', async () => {
    const executor = inferenceModel(balancedModel(2), { options: new Options().deviceIterations(2) });
    await executor.compile(tf.ones([2, 64]));
    expect(() => executor.cycleCount()).toThrow('cycleCount: the model has not run yet');
    await executor(tf.ones([2, 64]));
    expect(executor.cycleCount()).toBe(executor.executable.hardware.timeline.cycles);
    const latency = executor.getComputeLatency();
    expect(latency.mean).toBeCloseTo(executor.executable.hardware.timeline.duration, 12);
    expect(executor.compilationTime()).toBeGreaterThan(0);
  });

  it('reports compile progress through a callback, step by step', async () => {
    const seen: string[] = [];
    const executor = inferenceModel(balancedModel(2), { options: new Options().deviceIterations(2) });
    await executor.compile(tf.ones([2, 64]), { progress: (done, total) => seen.push(`${done}/${total}`) });
    expect(seen).toEqual(['1/6', '2/6', '3/6', '4/6', '5/6', '6/6']);
  });

  it('draws a progress bar on stderr when asked', async () => {
    const chunks: string[] = [];
    const write = process.stderr.write;
    process.stderr.write = ((chunk: string) => (chunks.push(chunk), true)) as typeof process.stderr.write;
    try {
      await inferenceModel(balancedModel(1), { options: new Options().showCompilationProgressBar(true) }).compile(tf.ones([1, 64]));
    } finally {
      process.stderr.write = write;
    }
    expect(chunks.join('')).toMatch(/Graph compilation: \[#{30}\] 6\/6 load/);
  });

  it('explicit placement on the same IPU count gives the same timeline as AutoStage', async () => {
    const auto = inferenceModel(balancedModel(2), { options: new Options().deviceIterations(2) });
    const explicit = inferenceModel(balancedModel(2), {
      options: new Options().deviceIterations(2).setExecutionStrategy(PipelinedExecution(Stage('s0').ipu(0), Stage('s1').ipu(1))),
    });
    await auto.compile(tf.ones([2, 64]));
    await explicit.compile(tf.ones([2, 64]));
    expect(explicit.executable.hardware.timeline.cycles).toBe(auto.executable.hardware.timeline.cycles);
  });
});
