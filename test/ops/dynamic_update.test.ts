/**
 * `ops.dynamicUpdate`: a slice replaced at an offset that is a tensor, read
 * each time the compiled model runs.
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { Options, inferenceModel, ops, optim, trainingModel } from 'poptfjs';
import { kernelCost } from '../../lib/ipu/kernel_cycles.js';
import { expectClose, smallIpuTarget } from '../helpers.js';

const ONE_TILE = { tiles: 1, memoryPerTile: 16 * 2 ** 20 };
const X = tf.tensor1d([2, 2, 3, 4, 5, 6, 7, 8]);
const X2 = tf.tensor2d([
  [2, 2, 3, 4, 5, 6, 7, 8],
  [8, 7, 6, 5, 4, 3, 2, 1],
]);

/** Plain tfjs: `x` with `src` in place of the `src.shape[dim]` elements from `start` along `dim`, as a concatenation. */
function reference(x: tf.Tensor, src: tf.Tensor, dim: number, start: number): tf.Tensor {
  const size = src.shape[dim]!;
  const length = x.shape[dim]!;
  const part = (from: number, to: number) =>
    tf.slice(
      x,
      x.shape.map((_, d) => (d === dim ? from : 0)),
      x.shape.map((n, d) => (d === dim ? to - from : n)),
    );
  return tf.concat([part(0, start), src, part(start + size, length)], dim);
}

describe('ops.dynamicUpdate', () => {
  it('updates as plain tfjs does, eagerly', () => {
    const src = tf.tensor1d([-1, -1, -1, -1]);
    expectClose(ops.dynamicUpdate(X, tf.tensor1d([-1]), 0, tf.scalar(1, 'int32'), 1), reference(X, tf.tensor1d([-1]), 0, 1));
    for (const start of [0, 1, 4]) expectClose(ops.dynamicUpdate(X, src, 0, tf.scalar(start, 'int32'), 4), reference(X, src, 0, start));
    // A size that does not divide the dimension is allowed, as in PopTorch.
    expectClose(ops.dynamicUpdate(tf.tensor1d([2, 2, 3]), tf.tensor1d([-1, -1]), 0, tf.scalar(1, 'int32'), 2), tf.tensor1d([2, -1, -1]));
    const row = tf.fill([1, 8], -1);
    expectClose(ops.dynamicUpdate(X2, row, 0, tf.tensor1d([1], 'int32'), 1), reference(X2, row, 0, 1));
    const column = tf.tensor2d([[-1], [-1]]);
    expectClose(ops.dynamicUpdate(X2, column, 1, tf.scalar(4, 'int32'), 1), reference(X2, column, 1, 4));
  });

  it('serves every offset from one compiled model, as a poptfjs.DynamicUpdate node', async () => {
    const executor = inferenceModel((x: tf.Tensor, src: tf.Tensor, start: tf.Tensor) => ops.dynamicUpdate(x, tf.neg(src), 1, start, 2), {
      options: new Options().ipuTarget(ONE_TILE),
    });
    // Compiled with an example offset out of bounds, as PopTorch's tests/slice_test.py does: only the offsets run with are checked.
    await executor.compile(tf.randomNormal([2, 8]), tf.randomNormal([2, 2]), tf.scalar(20, 'int32'));
    const compiled = executor.executable;
    expect(compiled.graph.nodes.map((n) => n.kernel)).toEqual(['Neg', 'poptfjs.DynamicUpdate']);
    const src = tf.tensor2d([
      [10, 20],
      [30, 40],
    ]);
    for (const start of [0, 3, 6]) {
      const out = (await executor.run(X2, src, tf.scalar(start, 'int32'))) as tf.Tensor;
      expectClose(out, reference(X2, tf.neg(src), 1, start));
    }
    expect(executor.executable).toBe(compiled);
    expect(executor.irText()).toMatch(/= poptfjs\.DynamicUpdate\(x=%\d+, src=%\d+, start=%\d+\)/);
  });

  it('refuses an offset that puts the slice outside the tensor when it runs', async () => {
    const src = tf.tensor1d([7, 8]);
    expect(() => ops.dynamicUpdate(X, src, 0, tf.scalar(7, 'int32'), 2)).toThrow(
      'dynamicUpdate: start 7 is out of bounds: a slice of 2 along dimension 0 (of size 8) must start at 0 to 6',
    );
    const executor = inferenceModel((x: tf.Tensor, s: tf.Tensor, start: tf.Tensor) => ops.dynamicUpdate(x, s, 0, start, 2));
    await executor.compile(X, src, tf.scalar(0, 'int32'));
    await expect(executor.run(X, src, tf.scalar(-2, 'int32'))).rejects.toThrow('dynamicUpdate: start -2 is out of bounds');
  });

  it('has the gradients of the plain tfjs update, for the tensor and the slice', () => {
    const src = tf.tensor2d([
      [0.5, -1],
      [2, 3],
    ]);
    const weights = tf.tensor2d([
      [1, -2, 3, 0.5, 2, 1, -1, 4],
      [0.25, 3, -2, 1, 1, 2, 5, -3],
    ]);
    const loss = (update: (x: tf.Tensor, s: tf.Tensor) => tf.Tensor) => (x: tf.Tensor, s: tf.Tensor) => tf.sum(tf.mul(tf.square(update(x, s)), weights));
    const grads = tf.grads(loss((x, s) => ops.dynamicUpdate(x, s, 1, tf.scalar(3, 'int32'), 2)))([X2, src]);
    const expected = tf.grads(loss((x, s) => reference(x, s, 1, 3)))([X2, src]);
    expectClose(grads[0]!, expected[0]!);
    expectClose(grads[1]!, expected[1]!);
  });

  it('trains through the update as through plain tfjs, with the offset an input', async () => {
    const train = async (dynamic: boolean) => {
      const w = tf.variable(tf.tensor2d([[0.5, -1, 2, 0.25, 1, -0.5, 0.75, 1.5]]), true);
      const v = tf.variable(tf.tensor2d([[1, -2]]), true);
      const fn = (x: tf.Tensor, start: tf.Tensor, y: tf.Tensor) => {
        const h = tf.mul(x, w);
        const out = dynamic ? ops.dynamicUpdate(h, tf.mul(v, 3), 1, start, 2) : reference(h, tf.mul(v, 3), 1, 5);
        return [out, ops.identityLoss(tf.sum(tf.square(tf.sub(out, y))), 'sum')];
      };
      const executor = trainingModel(fn, { optimizer: new optim.SGD([w, v], { lr: 0.01 }) });
      // Its forward and backward passes traced with an example offset out of bounds.
      if (dynamic) await executor.compile(X2.slice(0, 1), tf.scalar(30, 'int32'), tf.ones([1, 8]));
      for (let i = 0; i < 3; i++) await executor.run(X2.slice(0, 1), tf.scalar(5, 'int32'), tf.ones([1, 8]));
      executor.copyWeightsToHost();
      return [w, v];
    };
    const [w, v] = await train(true);
    const [refW, refV] = await train(false);
    expectClose(w!, refW!);
    expectClose(v!, refV!);
    // The weights the update overwrote (5 and 6) got no gradient; the slice written in did.
    expect(Array.from(w!.dataSync().slice(5, 7))).toEqual([-0.5, 0.75]);
    expect(Array.from(v!.dataSync())).not.toEqual([1, -2]);
  });

  it('refuses arguments as PopTorch does', () => {
    const start = tf.scalar(0, 'int32');
    expect(() => ops.dynamicUpdate(X2, X, 0, start, 1)).toThrow('dynamicUpdate: input and src tensors must have same dimensionality. (2) vs (1)');
    expect(() => ops.dynamicUpdate(X, tf.tensor1d([1], 'int32'), 0, start, 1)).toThrow('dynamicUpdate: input and src tensor must have same dtype. (float32 vs int32)');
    expect(() => ops.dynamicUpdate(X, 5 as unknown as tf.Tensor, 0, start, 1)).toThrow('dynamicUpdate: src must be a tf.Tensor, got number');
    expect(() => ops.dynamicUpdate(X, tf.tensor1d([1, 2]), 0, start, 0)).toThrow('dynamicUpdate: The start and end of a slice must be different.');
    expect(() => ops.dynamicUpdate(X, tf.tensor1d([1, 2]), 0, start, -2)).toThrow(
      'dynamicUpdate: Taking a slice of a tensor with the end less than the start is not supported.',
    );
    expect(() => ops.dynamicUpdate(X2, tf.ones([2, 3]), 1, start, 2)).toThrow("dynamicUpdate: src must have shape [2, 2] (the input's, with 2 along dimension 1), got [2, 3]");
    expect(() => ops.dynamicUpdate(X, tf.tensor1d([1]), 0, tf.scalar(0), 1)).toThrow('dynamicUpdate: start must be an int32 tensor of one element');
  });

  it('costs the slice sent to its tiles and a copy of the tensor', async () => {
    const executor = inferenceModel((x: tf.Tensor, src: tf.Tensor, start: tf.Tensor) => ops.dynamicUpdate(x, src, 0, start, 16), {
      options: new Options().ipuTarget(ONE_TILE),
    });
    await executor.compile(tf.zeros([64, 32]), tf.zeros([16, 32]), tf.scalar(0, 'int32'));
    const graph = executor.executable.graph;
    const node = graph.nodes.find((n) => n.kernel === 'poptfjs.DynamicUpdate')!;
    const target = smallIpuTarget({ tiles: 8 });
    // The slice: 16 × 32 float32 = 2048 bytes, 256 a tile, exchanged at 4 bytes a cycle and copied at 8; the tensor, 8192
    // bytes, 1024 a tile, copied at 8; after two vertices of 170; two syncs.
    expect(kernelCost(graph, node, target)).toEqual({ compute: 2 * 170 + 256 / 8 + 1024 / 8, exchange: 256 / 4, sync: 2 * 90, temporaryBytes: 0 });
  });
});
