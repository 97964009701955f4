/**
 * Recomputation (`Options.autoRecomputation`, `ops.recomputationCheckpoint`):
 * fewer activations held between the passes, more compute in the backward
 * pass, the same numbers.
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { Block, Options, PipelinedExecution, type RecomputationType, Stage, ops, optim, planRecomputation, trainingModel, type HardwareAnalysis } from 'poptfjs';
import { expectClose } from '../helpers.js';

const WIDTH = 64;
const BLOCKS = ['b0', 'b1', 'b2', 'b3'];

/** Eight tanh dense layers of 64 in four blocks, seeded; `checkpointAfter` marks that layer's output as a checkpoint. */
function deepModel(checkpointAfter?: number) {
  const layers = Array.from({ length: 8 }, (_, i) => {
    const l = tf.layers.dense({ units: WIDTH, inputShape: [WIDTH], activation: 'tanh', kernelInitializer: tf.initializers.glorotUniform({ seed: i + 1 }) });
    l.apply(tf.zeros([1, WIDTH]));
    return l;
  });
  const model = (x: tf.Tensor) => {
    BLOCKS.forEach((userId, b) => {
      x = Block.run({ userId }, () => {
        for (const i of [2 * b, 2 * b + 1]) {
          x = layers[i]!.apply(x) as tf.Tensor;
          if (i === checkpointAfter) x = ops.recomputationCheckpoint(x);
        }
        return x;
      });
    });
    return x;
  };
  return { model, layers };
}

async function compiled(recomputation: RecomputationType, options: { checkpointAfter?: number; pipelined?: boolean } = {}) {
  const { model, layers } = deepModel(options.checkpointAfter);
  const opts = new Options().autoRecomputation(recomputation);
  opts.Training.gradientAccumulation(8);
  opts.setExecutionStrategy(options.pipelined ? PipelinedExecution(...BLOCKS.map((b, i) => Stage(b).ipu(i))) : PipelinedExecution(Stage(...BLOCKS).ipu(0)));
  const executor = trainingModel(model, {
    options: opts,
    loss: 'meanSquaredError',
    optimizer: new optim.SGD(
      layers.flatMap((l) => l.trainableWeights.map((w) => w.read() as tf.Variable)),
      { lr: 0.01 },
    ),
  });
  const x = tf.randomNormal([8 * 256, WIDTH], 0, 1, 'float32', 1);
  const y = tf.randomNormal([8 * 256, WIDTH], 0, 1, 'float32', 2);
  await executor.compile(x, y);
  return { executor, layers, x, y, hardware: executor.executable.hardware };
}

const activations = (h: HardwareAnalysis) => h.memory.ipus.map((m) => m.byKind.activations);
const computeTime = (h: HardwareAnalysis, pass?: 'F' | 'B') =>
  h.timeline.segments.filter((s) => s.kind === 'compute' && (pass === undefined || s.label.startsWith(pass))).reduce((sum, s) => sum + s.end - s.start, 0);

describe('recomputation', () => {
  it('holds fewer activations at the peak and spends at most one more forward pass of compute, on one IPU', async () => {
    const none = (await compiled('None')).hardware;
    const standard = (await compiled('Standard')).hardware;
    expect(none.recomputation).toBeUndefined();
    expect(standard.recomputation).toMatchObject({ type: 'Standard' });
    expect(standard.recomputation!.rerunNodes).toBeGreaterThan(8);
    // √n checkpointing: a third of the layer outputs stored, the rest remade segment by segment.
    expect(activations(standard)[0]!).toBeLessThan(0.7 * activations(none)[0]!);
    const extra = computeTime(standard) - computeTime(none);
    expect(extra).toBeGreaterThan(0);
    expect(extra).toBeLessThanOrEqual(computeTime(none, 'F') * (1 + 1e-9));
    expect(standard.timeline.duration).toBeGreaterThan(none.timeline.duration);
  });

  it('keeps the outputs of a recomputationCheckpoint', async () => {
    const none = (await compiled('None')).hardware;
    // Without checkpoints, the backward pass of the one stage remakes every layer output from the input:
    // less held between the passes, but the same peak.
    const plain = (await compiled('RecomputeAll')).hardware;
    const checkpointed = (await compiled('RecomputeAll', { checkpointAfter: 3 })).hardware;
    expect(checkpointed.recomputation!.values).toBeLessThan(plain.recomputation!.values);
    expect(checkpointed.recomputation!.rerunNodes).toBeLessThan(plain.recomputation!.rerunNodes);
    expect(activations(plain)[0]!).toBeLessThanOrEqual(activations(none)[0]!);
    expect(activations(checkpointed)[0]!).toBeLessThan(activations(plain)[0]!);
  });

  it('stores only stage inputs and checkpoints for the micro-batches in flight of a pipeline', async () => {
    const none = (await compiled('None', { pipelined: true })).hardware;
    const pipeline = (await compiled('Pipeline', { pipelined: true })).hardware;
    activations(pipeline).forEach((bytes, ipu) => expect(bytes).toBeLessThanOrEqual(activations(none)[ipu]!));
    // The first stage holds 7 micro-batches in flight at its peak (the backward pass of the oldest running).
    // Each earlier one stashes the stage input and both layers' outputs (3 × 256 × 64 floats) without recomputation,
    // and the stage input and output only (2 of them) with it; the oldest has one value left without recomputation.
    const value = 256 * WIDTH * 4;
    expect(none.memory.ipus[0]!.peak).toMatchObject({ microBatchesInFlight: 7, stashed: (6 * 3 + 1) * value });
    expect(pipeline.memory.ipus[0]!.peak).toMatchObject({ microBatchesInFlight: 7, stashed: 6 * 2 * value });
    expect(pipeline.timeline.duration).toBeGreaterThan(none.timeline.duration);
  });

  it("recomputes nothing the loss's stage runs after its last checkpoint, as PopART's Pipeline recomputation", async () => {
    // PopART (willow/src/transforms/pipeline.cpp, Pipeline::setFinalFwdStageRecomputation): the stage with the loss runs
    // its forward and backward passes back to back, so what follows its last checkpoint (or its input) is stored.
    const rerunIpus = async (checkpointAfter?: number) => {
      const { executable } = (await compiled('Pipeline', { pipelined: true, ...(checkpointAfter === undefined ? {} : { checkpointAfter }) })).executor;
      const { graph, placement } = executable;
      const rerun = [...planRecomputation(graph, placement, 'Pipeline').unitNodes.values()].flat();
      return rerun.map((id) => placement.stages[placement.nodeStages[id]!]!.ipu);
    };
    const plain = await rerunIpus();
    expect(new Set(plain)).toEqual(new Set([0, 1, 2]));
    // A checkpoint after layer 6, the first of the last stage's two layers: that layer is remade, the second is not.
    const checkpointed = await rerunIpus(6);
    const lastStage = checkpointed.filter((ipu) => ipu === 3).length;
    expect(lastStage).toBeGreaterThan(0);
    expect(checkpointed.filter((ipu) => ipu === 2).length).toBe(plain.filter((ipu) => ipu === 2).length);
    expect(lastStage).toBeLessThanOrEqual(plain.filter((ipu) => ipu === 2).length / 2);
  });

  it('computes the same losses and weights as without recomputation', async () => {
    const runs = await Promise.all((['None', 'RecomputeAll'] as const).map((type) => compiled(type, { checkpointAfter: 3 })));
    for (let call = 0; call < 2; call++) {
      const [a, b] = await Promise.all(runs.map((r) => r.executor(r.x, r.y)));
      expectClose(a![1], b![1], 0, 0);
    }
    runs.forEach((r) => r.executor.copyWeightsToHost());
    const [weightsA, weightsB] = runs.map((r) => r.layers.flatMap((l) => l.getWeights()));
    weightsA!.forEach((w, i) => expectClose(w, weightsB![i]!, 0, 0));
  });

  it('rejects an unknown recomputation type, naming the choices', () => {
    expect(() => new Options().autoRecomputation('Sometimes' as RecomputationType)).toThrow(
      /^Options\.autoRecomputation: expected one of RecomputationType\.None, .*RecomputationType\.RecomputeAll, got "Sometimes"$/,
    );
  });

  it('shows in the summary report', async () => {
    const { executor } = await compiled('Standard');
    expect(executor.getSummaryReport()).toMatch(/recomputation Standard: \d+ activations recomputed by \d+ re-run forward nodes/);
  });
});
