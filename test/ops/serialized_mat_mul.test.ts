/**
 * `ops.serializedMatMul`: a matrix product computed in serial steps, with the
 * numbers of `tf.matMul` and the memory and time of its steps.
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { Options, inferenceModel, ops, optim, trainingModel } from 'poptfjs';
import type { Graph } from '../../lib/ir/graph.js';
import { kernelCost } from '../../lib/ipu/kernel_cycles.js';
import { expectClose, smallIpuTarget } from '../helpers.js';

const { MatMulSerializationMode: Mode } = ops;
const ONE_TILE = { tiles: 1, memoryPerTile: 16 * 2 ** 20 };
const TARGET = smallIpuTarget(ONE_TILE);
const MODES = [Mode.InputChannels, Mode.ReducingDim, Mode.OutputChannels] as const;

async function compiledGraph(fn: (a: tf.Tensor, b: tf.Tensor) => tf.Tensor, a: tf.Tensor, b: tf.Tensor): Promise<Graph> {
  const executor = inferenceModel(fn, { options: new Options().ipuTarget(ONE_TILE) });
  await executor.compile(a, b);
  return executor.executable.graph;
}

function productCost(graph: Graph) {
  const node = graph.nodes.find((n) => n.kernel === 'poptfjs.SerializedMatMul' || n.kernel === 'BatchMatMul')!;
  return kernelCost(graph, node, TARGET);
}

describe('ops.serializedMatMul', () => {
  it("has the numbers of tf.matMul in every mode, eagerly and on the device (PopTorch's blas test)", async () => {
    const lhs = tf.randomUniform([1, 10, 200]);
    for (const mode of [...MODES, Mode.Disabled]) {
      for (const factor of [2, 5, 10]) {
        const rhs = tf.randomUniform([200, mode === Mode.OutputChannels ? Math.floor(45 / factor) * factor : 45]);
        const expected = tf.matMul(lhs, rhs);
        expectClose(ops.serializedMatMul(lhs, rhs, mode, factor, true), expected, 1e-5, 1e-4);
        const executor = inferenceModel((a: tf.Tensor, b: tf.Tensor) => ops.serializedMatMul(a, b, mode, factor));
        expectClose((await executor.run(lhs, rhs)) as tf.Tensor, expected, 1e-5, 1e-4);
        const kernels = executor.executable.graph.nodes.map((n) => n.kernel);
        expect(kernels).toContain(mode === Mode.Disabled ? 'BatchMatMul' : 'poptfjs.SerializedMatMul');
      }
    }
    // A batch of right operands.
    const a = tf.randomNormal([3, 4, 6]);
    const b = tf.randomNormal([3, 6, 8]);
    expectClose(ops.serializedMatMul(a, b, Mode.OutputChannels, 4), tf.matMul(a, b), 1e-5, 1e-5);
  });

  it('has the gradients of tf.matMul, serialized the same way', async () => {
    const a = tf.randomNormal([6, 4]);
    const b = tf.randomNormal([4, 8]);
    const weights = tf.randomNormal([6, 8]);
    const loss = (product: (x: tf.Tensor, y: tf.Tensor) => tf.Tensor) => (x: tf.Tensor, y: tf.Tensor) => tf.sum(tf.mul(product(x, y), weights));
    const expected = tf.grads(loss((x, y) => tf.matMul(x, y)))([a, b]);
    for (const mode of MODES) {
      const grads = tf.grads(loss((x, y) => ops.serializedMatMul(x, y, mode, 2)))([a, b]);
      expectClose(grads[0]!, expected[0]!, 1e-5, 1e-5);
      expectClose(grads[1]!, expected[1]!, 1e-5, 1e-5);
    }
    // The backward products are serialized products, split along the dimension of the forward one.
    const w = tf.variable(tf.randomNormal([4, 8]), true);
    const executor = trainingModel((x: tf.Tensor) => ops.identityLoss(tf.sum(ops.serializedMatMul(x, w, Mode.InputChannels, 2)), 'sum'), {
      optimizer: new optim.SGD([w], { lr: 0.1 }),
    });
    await executor.compile(a);
    const serialized = executor.executable.graph.nodes.filter((n) => n.kernel === 'poptfjs.SerializedMatMul');
    expect(serialized.map((n) => [n.annotations.pass, n.attrs.mode])).toEqual([
      ['forward', 'InputChannels'],
      ['backward', 'ReducingDim'],
    ]);
  });

  it('trains as with tf.matMul', async () => {
    const train = async (serialize: boolean) => {
      const w = tf.variable(
        tf.tensor2d([
          [0.5, -1, 2, 0.25],
          [1, -0.5, 0.75, 1.5],
        ]),
        true,
      );
      const fn = (x: tf.Tensor, y: tf.Tensor) => {
        const out = serialize ? ops.serializedMatMul(x, w, Mode.ReducingDim, 2) : tf.matMul(x, w);
        return [out, ops.identityLoss(tf.sum(tf.square(tf.sub(out, y))), 'sum')];
      };
      const executor = trainingModel(fn, { optimizer: new optim.SGD([w], { lr: 0.05 }) });
      for (let i = 0; i < 3; i++)
        await executor.run(
          tf.tensor2d([
            [1, 2],
            [3, 4],
          ]),
          tf.tensor2d([
            [0, 1, 0, 1],
            [1, 0, 1, 0],
          ]),
        );
      executor.copyWeightsToHost();
      return w;
    };
    expectClose(await train(true), await train(false));
  });

  it("holds one step's operands at a time: the temporary memory drops by about the factor", async () => {
    const a = tf.zeros([4, 256]);
    const b = tf.zeros([256, 256]);
    const plain = await compiledGraph((x, y) => tf.matMul(x, y), a, b);
    // On one tile the planner splits nothing: the tile receives both operands, 4 bytes an element.
    expect(productCost(plain).temporaryBytes).toBe((4 * 256 + 256 * 256) * 4);
    const byColumns = await compiledGraph((x, y) => ops.serializedMatMul(x, y, Mode.OutputChannels, 4), a, b);
    // Each step receives the left operand and a quarter of the right one's columns.
    expect(productCost(byColumns).temporaryBytes).toBe((4 * 256 + 256 * 64) * 4);
    expect(productCost(plain).temporaryBytes / productCost(byColumns).temporaryBytes).toBeCloseTo(3.82, 2);
    // Split along the reduced dimension: a quarter of both, and the partial product (4 × 256 float32) added into the output.
    const byDepth = await compiledGraph((x, y) => ops.serializedMatMul(x, y, Mode.ReducingDim, 4), a, b);
    expect(productCost(byDepth).temporaryBytes).toBe((4 * 64 + 64 * 256) * 4 + 4 * 256 * 4);
    // The memory plan takes the step's temporary memory as the product's.
    const executor = inferenceModel((x: tf.Tensor, y: tf.Tensor) => ops.serializedMatMul(x, y, Mode.OutputChannels, 4), { options: new Options().ipuTarget(ONE_TILE) });
    await executor.compile(a, b);
    expect(executor.executable.hardware.memory.ipus[0]!.peak.temporary).toBe((4 * 256 + 256 * 64) * 4);
  });

  it('takes the time of its steps one after another', async () => {
    const a = tf.zeros([4, 256]);
    const b = tf.zeros([256, 256]);
    const byColumns = productCost(await compiledGraph((x, y) => ops.serializedMatMul(x, y, Mode.OutputChannels, 4), a, b));
    const columnStep = productCost(await compiledGraph((x, y) => tf.matMul(x, y), a, tf.zeros([256, 64])));
    expect(byColumns.compute).toBe(4 * columnStep.compute);
    expect(byColumns.exchange).toBe(4 * columnStep.exchange);
    expect(byColumns.sync).toBe(4 * columnStep.sync);
    const byDepth = productCost(await compiledGraph((x, y) => ops.serializedMatMul(x, y, Mode.ReducingDim, 4), a, b));
    const depthStep = productCost(await compiledGraph((x, y) => tf.matMul(x, y), tf.zeros([4, 64]), tf.zeros([64, 256])));
    // Three additions of a 4 × 256 partial product on the one tile: a vertex (170 cycles) and 1.5 cycles an element in float32, a sync each.
    expect(byDepth.compute).toBe(4 * depthStep.compute + 3 * (170 + 1024 * 1.5));
    expect(byDepth.sync).toBe(4 * depthStep.sync + 3 * 90);
    const plain = productCost(await compiledGraph((x, y) => tf.matMul(x, y), a, b));
    expect(byColumns.compute + byColumns.exchange + byColumns.sync).toBeGreaterThan(plain.compute + plain.exchange + plain.sync);
  });

  it('keepPrecision adds the partial products of a float16 product in float32', async () => {
    const a = tf.zeros([4, 256]);
    const b = tf.zeros([256, 256]);
    const inHalf = (graph: Graph): Graph => ({ ...graph, values: graph.values.map((v) => (v.dtype === 'float32' ? { ...v, precision: 'float16' as const } : v)) });
    const cost = async (keepPrecision: boolean) => productCost(inHalf(await compiledGraph((x, y) => ops.serializedMatMul(x, y, Mode.ReducingDim, 4, keepPrecision), a, b)));
    const kept = await cost(true);
    const halved = await cost(false);
    // The partial product of 4 × 256 elements takes 4 bytes an element instead of 2, and its additions 1.5 cycles an element instead of 0.75.
    expect(kept.temporaryBytes - halved.temporaryBytes).toBe(4 * 256 * 2);
    expect(kept.compute - halved.compute).toBe(3 * 1024 * (1.5 - 0.75));
  });

  it('refuses a factor that does not divide the dimension split, and other bad arguments', () => {
    const a = tf.zeros([6, 4]);
    const b = tf.zeros([4, 8]);
    expect(() => ops.serializedMatMul(a, b, Mode.InputChannels, 4)).toThrow(
      'serializedMatMul: the factor (4) must divide the input channels (the rows of lhs), 6, to split it into equal steps',
    );
    expect(() => ops.serializedMatMul(a, b, Mode.ReducingDim, 3)).toThrow(
      'serializedMatMul: the factor (3) must divide the reducing dimension, 4, to split it into equal steps',
    );
    expect(() => ops.serializedMatMul(a, b, Mode.OutputChannels, 0)).toThrow('serializedMatMul: the factor (0) must divide the output channels (the columns of rhs), 8');
    expect(() => ops.serializedMatMul(a, b, 'Rows' as never, 2)).toThrow(
      "serializedMatMul: mode must be one of MatMulSerializationMode's 'InputChannels', 'ReducingDim', 'OutputChannels', 'Disabled', got \"Rows\"",
    );
    expect(() => ops.serializedMatMul(a, tf.zeros([5, 8]), Mode.OutputChannels, 2)).toThrow('serializedMatMul: the columns of lhs (4) must equal the rows of rhs (5)');
    expect(() => ops.serializedMatMul(tf.zeros([2, 6, 4]), tf.zeros([3, 4, 8]), Mode.OutputChannels, 2)).toThrow(
      'serializedMatMul: rhs must have rank 2 or the batch of lhs [2], got shape [3, 4, 8]',
    );
    expect(() => ops.serializedMatMul(a, b, Mode.OutputChannels, 2, 1 as never)).toThrow('serializedMatMul: keepPrecision must be a boolean, got number');
  });
});
