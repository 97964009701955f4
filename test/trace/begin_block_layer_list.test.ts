/**
 * `BeginBlock` on a branching layers model places each layer by the layer
 * list the user annotated (`model.layers`), not by the order tfjs runs the
 * layers in: an Inception-style module whose branches tfjs lists by depth
 * but runs one after the other.
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { BeginBlock, Options, inferenceModel, optim, trainingModel } from 'poptfjs';
import type { Executable } from '../../lib/executable/executable.js';

/**
 * Two branches, `branch_a` (one convolution) and `branch_b1` → `branch_b2`,
 * concatenated, then a head. tfjs lists the layers by depth (`branch_b1`,
 * `branch_a`, `branch_b2`, ...) and runs branch b first (`branch_b1`,
 * `branch_b2`, `branch_a`, ...).
 */
function branchingModel(): tf.LayersModel {
  const conv = (name: string, seed: number, kernelSize = 1) =>
    tf.layers.conv2d({ filters: 2, kernelSize, padding: 'same', name, kernelInitializer: tf.initializers.glorotUniform({ seed }) });
  const input = tf.input({ shape: [6, 6, 2], name: 'image' });
  const a = conv('branch_a', 1).apply(input) as tf.SymbolicTensor;
  const b1 = conv('branch_b1', 2).apply(input) as tf.SymbolicTensor;
  const b2 = conv('branch_b2', 3, 3).apply(b1) as tf.SymbolicTensor;
  const joined = tf.layers.concatenate({ name: 'joined' }).apply([a, b2]) as tf.SymbolicTensor;
  const head = conv('head', 4).apply(joined) as tf.SymbolicTensor;
  return tf.model({ inputs: input, outputs: head, name: 'branching' });
}

/** By the layer list: `branch_b1` comes before the annotated `branch_a`, every other layer after it. */
const EXPECTED_IPU: Readonly<Record<string, number>> = { branch_b1: 0, branch_a: 1, branch_b2: 1, joined: 1, head: 1 };

/** The layers in the order their kernels were traced (the order tfjs ran them). */
function executionOrder(executable: Executable): string[] {
  const layers = executable.graph.nodes.filter((n) => n.annotations.pass === 'forward').map((n) => n.annotations.layer);
  return [...new Set(layers.filter((l): l is string => l !== undefined))];
}

/** The IPU of every node of each layer, forward and backward. */
function layerIpus(executable: Executable): Map<string, Set<number>> {
  const { graph, placement } = executable;
  const ipus = new Map<string, Set<number>>();
  for (const node of graph.nodes) {
    const layer = node.annotations.layer;
    if (layer === undefined) continue;
    const ipu = placement.stages[placement.nodeStages[node.id]!]!.ipu;
    ipus.set(layer, (ipus.get(layer) ?? new Set()).add(ipu));
  }
  return ipus;
}

/** The IPU whose memory holds each weight. */
function weightIpus(executable: Executable): Map<string, number> {
  return new Map(executable.hardware.memory.ipus.flatMap((m) => m.items.filter((i) => i.kind === 'weights').map((i) => [i.name, m.ipu] as const)));
}

function expectLayerListPlacement(model: tf.LayersModel, executable: Executable): void {
  const listed = model.layers.map((l) => l.name).filter((name) => name !== 'image');
  expect(listed).toEqual(['branch_b1', 'branch_a', 'branch_b2', 'joined', 'head']);
  expect(executionOrder(executable)).toEqual(['branch_b1', 'branch_b2', 'branch_a', 'joined', 'head']);
  expect(Object.fromEntries([...layerIpus(executable)].map(([layer, ipus]) => [layer, [...ipus]]))).toEqual(
    Object.fromEntries(Object.entries(EXPECTED_IPU).map(([layer, ipu]) => [layer, [ipu]])),
  );
  const weights = weightIpus(executable);
  for (const layer of ['branch_b1', 'branch_a', 'branch_b2', 'head']) {
    expect(weights.get(`${layer}/kernel`), layer).toBe(EXPECTED_IPU[layer]);
    expect(weights.get(`${layer}/bias`), layer).toBe(EXPECTED_IPU[layer]);
  }
}

describe('BeginBlock on a branching layers model', () => {
  it('places each layer in the block of the nearest annotated layer before it in model.layers, and matches model.predict', async () => {
    const model = branchingModel();
    BeginBlock(model.getLayer('branch_a'), { ipuId: 1 });
    const executor = inferenceModel(model, { options: new Options().deviceIterations(2) });
    const x = tf.randomNormal([2, 6, 6, 2], 0, 1, 'float32', 5);
    const out = (await executor(x)) as tf.Tensor;
    expectLayerListPlacement(model, executor.executable);
    expect(tf.max(tf.abs(tf.sub(out, model.predict(x) as tf.Tensor))).dataSync()[0]).toBeLessThan(1e-6);
    executor.destroy();
  });

  it("keeps a training step's backward nodes and weights with their layers", async () => {
    const model = branchingModel();
    BeginBlock(model.getLayer('branch_a'), { ipuId: 1 });
    const options = new Options();
    options.Training.gradientAccumulation(4);
    const executor = trainingModel(model, { options, loss: 'meanSquaredError', optimizer: new optim.SGD(model, { lr: 0.01 }) });
    await executor.compile(tf.zeros([4, 6, 6, 2]), tf.zeros([4, 6, 6, 2]));
    expectLayerListPlacement(model, executor.executable);
    executor.destroy();
  });
});
