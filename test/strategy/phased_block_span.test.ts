/**
 * A block spanning several IPUs of its phase, as PopTorch's parallel phased
 * execution allows: a Stage without an IPU places each part of its block on
 * the IPU of the Block scope that traced it.
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import {
  Block,
  Options,
  ParallelPhasedExecution,
  Phase,
  PipelinedExecution,
  SerialPhasedExecution,
  Stage,
  inferenceModel,
  optim,
  trainingModel,
  type ExecutionStrategy,
} from 'poptfjs';
import { expectClose } from '../helpers.js';

/** The weights of the model: x[2,8] · w0[8,8] and x · w1[8,16] in phase 0, then a0 · w2[8,4] + a1 · w3[16,4] in phase 1. */
function weights(): tf.Variable[] {
  return [
    [8, 8],
    [8, 16],
    [8, 4],
    [16, 4],
  ].map((shape, i) => tf.variable(tf.randomNormal(shape, 0, 1, 'float32', i + 1), true));
}

/** Block 'A' on IPUs 0 and 2, block 'B' on IPUs 1 and 3 (the add with B's part on IPU 3). */
function spanningModel(w: tf.Variable[]) {
  return (x: tf.Tensor) => {
    const a0 = Block.run({ userId: 'A', ipuId: 0 }, () => tf.relu(tf.matMul(x, w[0]!)));
    const a1 = Block.run({ userId: 'A', ipuId: 2 }, () => tf.relu(tf.matMul(x, w[1]!)));
    const b0 = Block.run({ userId: 'B', ipuId: 1 }, () => tf.matMul(a0, w[2]!));
    return Block.run({ userId: 'B', ipuId: 3 }, () => tf.add(tf.matMul(a1, w[3]!), b0));
  };
}

const x = tf.randomNormal([2, 8], 0, 1, 'float32', 9);
const target = tf.randomNormal([2, 4], 0, 1, 'float32', 10);

async function inference(strategy: ExecutionStrategy) {
  const w = weights();
  const executor = inferenceModel(spanningModel(w), { options: new Options().setExecutionStrategy(strategy) });
  const output = (await executor(x)) as tf.Tensor;
  return { executor, output, reference: spanningModel(w)(x) };
}

describe('a block spanning the IPUs of its phase', () => {
  it('places each part of the block on its IPU, one stage per IPU, and computes what the model computes', async () => {
    const { executor, output, reference } = await inference(ParallelPhasedExecution('A', 'B'));
    const { placement } = executor.executable;
    expect(placement.stages.map((s) => [s.phase, s.ipu, s.blocks])).toEqual([
      [0, 0, ['A']],
      [0, 2, ['A']],
      [1, 1, ['B']],
      [1, 3, ['B']],
    ]);
    expect(placement.units.map((u) => [u.pass, u.ipus])).toEqual([
      ['forward', [0, 2]],
      ['forward', [1, 3]],
      ['backward', [1, 3]],
      ['backward', [0, 2]],
    ]);
    expect(placement.ipusPerReplica).toBe(4);
    expect(executor.executable.schedule.steps.map((s) => s.phase)).toEqual([0, 1]);
    expectClose(output, reference);
    executor.destroy();
  });

  it('holds on each IPU the weights and working values of its part only', async () => {
    const { executor } = await inference(ParallelPhasedExecution('A', 'B'));
    const { ipus } = executor.executable.hardware.memory;
    // float32 weights: w0 8·8·4 = 256 B on IPU 0, w2 8·4·4 = 128 B on IPU 1, w1 8·16·4 = 512 B on IPU 2, w3 16·4·4 = 256 B on IPU 3.
    expect(ipus.map((m) => m.byKind.weights)).toEqual([256, 128, 512, 256]);
    expect(ipus.map((m) => m.items.filter((i) => i.kind === 'weights').length)).toEqual([1, 1, 1, 1]);
    // At each IPU's peak, its product's input and output are live:
    // IPU 0: x[2,8] 64 B + x·w0 [2,8] 64 B; IPU 1: a0[2,8] 64 B + a0·w2 [2,4] 32 B;
    // IPU 2: x 64 B + x·w1 [2,16] 128 B; IPU 3: a1[2,16] 128 B + a1·w3 [2,4] 32 B.
    expect(ipus.map((m) => m.byKind.activations)).toEqual([128, 96, 192, 160]);
    executor.destroy();
  });

  it('runs the parts of a phase at the same time: the IPUs share the work one IPU would do alone', async () => {
    const spanning = await inference(ParallelPhasedExecution('A', 'B'));
    const oneIpu = await inference(ParallelPhasedExecution(Stage('A').ipu(0), Stage('B').ipu(1)));
    expect(oneIpu.executor.executable.placement.stages.map((s) => [s.ipu, s.blocks])).toEqual([
      [0, ['A']],
      [1, ['B']],
    ]);
    const split = spanning.executor.executable.hardware.timeline.ipus;
    const whole = oneIpu.executor.executable.hardware.timeline.ipus;
    // Each product costs the same wherever it runs: A's compute on IPUs 0 and 2 adds up to IPU 0's alone, B's likewise.
    expect(split[0]!.compute + split[2]!.compute).toBeCloseTo(whole[0]!.compute, 15);
    expect(split[1]!.compute + split[3]!.compute).toBeCloseTo(whole[1]!.compute, 15);
    expect(split.every((ipu) => ipu.compute > 0)).toBe(true);
    expect(spanning.executor.executable.hardware.timeline.duration).toBeLessThan(oneIpu.executor.executable.hardware.timeline.duration);
    spanning.executor.destroy();
    oneIpu.executor.destroy();
  });

  it('trains as plain tfjs SGD, each backward node on the IPU of its forward node', async () => {
    const w = weights();
    const reference = weights();
    const executor = trainingModel(spanningModel(w), {
      options: new Options().setExecutionStrategy(ParallelPhasedExecution('A', 'B')),
      loss: 'meanSquaredError',
      optimizer: new optim.SGD(w, { lr: 0.1 }),
    });
    for (let step = 0; step < 3; step++) {
      const [, loss] = (await executor(x, target)) as [tf.Tensor, tf.Tensor];
      const { value, grads } = tf.variableGrads(() => tf.losses.meanSquaredError(target, spanningModel(reference)(x)) as tf.Scalar, reference);
      expectClose(loss, value);
      for (const v of reference) v.assign(tf.sub(v, tf.mul(0.1, grads[v.name]!)));
    }
    executor.copyWeightsToHost();
    w.forEach((v, i) => expectClose(v, reference[i]!));
    const { graph, placement } = executor.executable;
    const ipuOf = (node: number) => placement.stages[placement.nodeStages[node]!]!.ipu;
    const backward = graph.nodes.filter((n) => n.annotations.pass === 'backward' && n.annotations.gradOf !== undefined && n.annotations.block !== undefined);
    expect(backward.length).toBeGreaterThan(0);
    for (const node of backward) expect(ipuOf(node.id)).toBe(ipuOf(node.annotations.gradOf!));
    executor.destroy();
  });

  it('spans the IPUs of a serial phase too', async () => {
    const w = weights();
    const model = (x: tf.Tensor) => {
      const a0 = Block.run({ userId: 'A', ipuId: 0 }, () => tf.relu(tf.matMul(x, w[0]!)));
      const a1 = Block.run({ userId: 'A', ipuId: 1 }, () => tf.relu(tf.matMul(x, w[1]!)));
      const b0 = Block.run({ userId: 'B', ipuId: 0 }, () => tf.matMul(a0, w[2]!));
      return Block.run({ userId: 'B', ipuId: 1 }, () => tf.add(tf.matMul(a1, w[3]!), b0));
    };
    const executor = inferenceModel(model, { options: new Options().setExecutionStrategy(SerialPhasedExecution('A', 'B')) });
    expectClose((await executor(x)) as tf.Tensor, model(x));
    expect(executor.executable.placement.stages.map((s) => [s.phase, s.ipu])).toEqual([
      [0, 0],
      [0, 1],
      [1, 0],
      [1, 1],
    ]);
    // IPU 0 reads w0 and w2 (256 + 128 B), IPU 1 w1 and w3 (512 + 256 B): all in streaming memory, as PopTorch keeps the
    // weights of a phased model off chip unless their location is set (Compiler::initSession in graphcore/poptorch
    // popart_compiler/source/Compiler.cpp, location_weight). On chip are those of the phase that runs: w0 or w2 on IPU 0,
    // w1 or w3 on IPU 1, the larger of each.
    const memory = executor.executable.hardware.memory.ipus;
    expect(memory.map((m) => m.streaming.byKind.weights)).toEqual([384, 768]);
    expect(memory.map((m) => m.byKind.weights)).toEqual([256, 512]);
    executor.destroy();
  });

  it('a Stage with an IPU of its own keeps the whole block there', async () => {
    const strategy = ParallelPhasedExecution(Phase(Stage('A').ipu(0)), Phase(Stage('B').ipu(3)));
    const { executor, output, reference } = await inference(strategy);
    expect(executor.executable.placement.stages.map((s) => [s.ipu, s.blocks])).toEqual([
      [0, ['A']],
      [3, ['B']],
    ]);
    // w0 and w1 (256 + 512 B) on IPU 0, w2 and w3 (128 + 256 B) on IPU 3.
    expect(executor.executable.hardware.memory.ipus.map((m) => m.byKind.weights)).toEqual([768, 0, 0, 384]);
    expectClose(output, reference);
    executor.destroy();
  });

  it('refuses a spanning block outside phased execution, and parts that break the phase rules', async () => {
    const compile = (strategy?: ExecutionStrategy) => {
      const options = new Options();
      if (strategy) options.setExecutionStrategy(strategy);
      return inferenceModel(spanningModel(weights()), { options }).compile(x);
    };
    await expect(compile(PipelinedExecution(Stage('A'), Stage('B')))).rejects.toThrow(
      "block 'A' is placed on IPU 0 and on IPU 2; a block runs on one IPU (only a phased execution lets a block span the IPUs of its phase)",
    );
    await expect(compile(ParallelPhasedExecution('B', 'A'))).rejects.toThrow('ParallelPhasedExecution: phase 0 runs on IPU 1, but even phases must run on even IPUs');
    // Stages without IPUs take their blocks' IPUs, as in PopTorch: the serial phases then run on other IPUs; with IPUs of their own they share one group.
    await expect(compile(SerialPhasedExecution('A', 'B'))).resolves.toBeUndefined();
    await expect(compile(SerialPhasedExecution(Phase(Stage('A').ipu(0)), Phase(Stage('B').ipu(1))))).rejects.toThrow(
      'SerialPhasedExecution: phase 1 runs on IPUs 1 but phase 0 on IPUs 0; serial phases all run on the same group of IPUs',
    );
    const partly = (x: tf.Tensor) => {
      const a = Block.run({ userId: 'A', ipuId: 0 }, () => tf.relu(x));
      const c = Block.run({ userId: 'C' }, () => tf.neg(x));
      return Block.run({ userId: 'B', ipuId: 1 }, () => tf.add(a, c));
    };
    await expect(inferenceModel(partly, { options: new Options().setExecutionStrategy(ParallelPhasedExecution(Phase('A', 'C'), Phase('B'))) }).compile(x)).rejects.toThrow(
      "ParallelPhasedExecution: block 'C' of stage 0 of phase 0 has no IPU, and neither has the stage; give the block an ipuId, or set the stage's IPU with Stage(...).ipu(n)",
    );
  });
});
