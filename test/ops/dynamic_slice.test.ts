/**
 * `ops.dynamicSlice`: a slice at an offset that is a tensor, read each time
 * the compiled model runs.
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { Options, inferenceModel, ops, optim, plan, trainingModel } from 'poptfjs';
import { kernelCost } from '../../lib/ipu/kernel_cycles.js';
import { expectClose, smallIpuTarget } from '../helpers.js';

const ONE_TILE = { tiles: 1, memoryPerTile: 16 * 2 ** 20 };
const X = tf.tensor1d([2, 2, 3, 4, 5, 6, 7, 8]);
const X2 = tf.tensor2d([
  [2, 2, 3, 4, 5, 6, 7, 8],
  [8, 7, 6, 5, 4, 3, 2, 1],
]);

/** Plain tfjs's `x[start : start + size : step]` along `dim`, as a gather (which tfjs can differentiate). */
function reference(x: tf.Tensor, dim: number, start: number, size: number, step: number): tf.Tensor {
  const indices = Array.from({ length: Math.ceil(size / step) }, (_, i) => start + i * step);
  return tf.gather(x, tf.tensor1d(indices, 'int32'), dim);
}

describe('ops.dynamicSlice', () => {
  it('slices as plain tfjs does, eagerly', () => {
    for (const step of [1, 2, 3]) {
      expectClose(ops.dynamicSlice(X, 0, tf.scalar(1, 'int32'), 4, step), reference(X, 0, 1, 4, step));
      expectClose(ops.dynamicSlice(X2, 1, tf.tensor1d([4], 'int32'), 4, step), reference(X2, 1, 4, 4, step));
      expectClose(ops.dynamicSlice(X2, -2, tf.scalar(1, 'int32'), 1, step), reference(X2, 0, 1, 1, step));
    }
  });

  it('serves every offset from one compiled model, as a poptfjs.DynamicSlice node', async () => {
    for (const step of [1, 2, 3]) {
      const executor = inferenceModel((x: tf.Tensor, start: tf.Tensor) => ops.dynamicSlice(tf.mul(x, 2), 0, start, 4, step), {
        options: new Options().ipuTarget(ONE_TILE),
      });
      // Compiled with other values and an offset out of bounds (1 + 20), as PopTorch's dynamic_slice_harness does
      // (tests/slice_test.py): the example offset is not checked, the offsets the model runs with are.
      await executor.compile(tf.randomNormal([8]), tf.scalar(21, 'int32'));
      const compiled = executor.executable;
      expect(compiled.graph.nodes.map((n) => n.kernel)).toEqual(['Multiply', 'poptfjs.DynamicSlice']);
      for (const start of [0, 1, 3, 4]) {
        const out = (await executor.run(X, tf.scalar(start, 'int32'))) as tf.Tensor;
        expectClose(out, reference(tf.mul(X, 2), 0, start, 4, step));
      }
      expect(executor.executable).toBe(compiled);
      expect(executor.irText()).toMatch(/= poptfjs\.DynamicSlice\(x=%\d+, start=%\d+\)/);
    }
  });

  it('refuses an offset that puts the slice outside the tensor when it runs', async () => {
    expect(() => ops.dynamicSlice(X, 0, tf.scalar(5, 'int32'), 4, 1)).toThrow(
      'dynamicSlice: start 5 is out of bounds: a slice of 4 along dimension 0 (of size 8) must start at 0 to 4',
    );
    expect(() => ops.dynamicSlice(X, 0, tf.scalar(-1, 'int32'), 4, 1)).toThrow('dynamicSlice: start -1 is out of bounds');
    const executor = inferenceModel((x: tf.Tensor, start: tf.Tensor) => ops.dynamicSlice(x, 0, start, 4, 1));
    await executor.compile(X, tf.scalar(-7, 'int32'));
    await expect(executor.run(X, tf.scalar(6, 'int32'))).rejects.toThrow(
      'dynamicSlice: start 6 is out of bounds: a slice of 4 along dimension 0 (of size 8) must start at 0 to 4',
    );
  });

  it('has the gradient of the plain tfjs slice', () => {
    const weights = tf.tensor2d([
      [1, -2, 3, 0.5, 2, 1, -1, 4],
      [0.25, 3, -2, 1, 1, 2, 5, -3],
    ]);
    for (const step of [1, 2, 3]) {
      const loss = (slice: (x: tf.Tensor) => tf.Tensor) => (x: tf.Tensor) => tf.sum(tf.mul(tf.square(slice(tf.mul(x, weights))), 0.5));
      const grad = tf.grad(loss((x) => ops.dynamicSlice(x, 1, tf.scalar(2, 'int32'), 4, step)))(X2);
      const expected = tf.grad(loss((x) => reference(x, 1, 2, 4, step)))(X2);
      expectClose(grad, expected);
    }
  });

  it('trains through the slice as through plain tfjs slicing, with the offset an input', async () => {
    const train = async (dynamic: boolean) => {
      const w = tf.variable(tf.tensor2d([[0.5, -1, 2, 0.25, 1, -0.5, 0.75, 1.5]]), true);
      const fn = (x: tf.Tensor, start: tf.Tensor, y: tf.Tensor) => {
        const h = tf.mul(x, w);
        const out = dynamic ? ops.dynamicSlice(h, 1, start, 4, 2) : reference(h, 1, 3, 4, 2);
        return [out, ops.identityLoss(tf.sum(tf.square(tf.sub(out, y))), 'sum')];
      };
      const executor = trainingModel(fn, { optimizer: new optim.SGD([w], { lr: 0.05 }) });
      for (let i = 0; i < 3; i++) await executor.run(X2.slice(0, 1), tf.scalar(3, 'int32'), tf.tensor2d([[0, 1]]));
      executor.copyWeightsToHost();
      return w;
    };
    const dynamic = await train(true);
    expectClose(dynamic, await train(false));
    // Only the elements the slice took (3 and 5) were trained.
    const trained = Array.from(dynamic.dataSync()).map((v, i) => v !== [0.5, -1, 2, 0.25, 1, -0.5, 0.75, 1.5][i]);
    expect(trained).toEqual([false, false, false, true, false, true, false, false]);
  });

  it('plans a slice of a [1e9] input with shapes only, without allocating it', async () => {
    const before = process.memoryUsage().rss;
    const planned = await plan(() => (x: tf.Tensor, start: tf.Tensor) => ops.dynamicSlice(x, 0, start, 1000, 1), {
      inputs: [{ shape: [1e9] }, { shape: [1], dtype: 'int32' }],
    });
    // 4e9 B of float32 input on one IPU of 897 MiB: the plan says it does not fit, and the host never held it.
    expect(planned.fits).toBe(false);
    expect(planned.executable.graph.nodes.map((n) => n.kernel)).toEqual(['poptfjs.DynamicSlice']);
    expect(process.memoryUsage().rss - before).toBeLessThan(2 ** 30);
  });

  it('refuses arguments as PopTorch does', () => {
    const start = tf.scalar(0, 'int32');
    expect(() => ops.dynamicSlice([1, 2] as unknown as tf.Tensor, 0, start, 1, 1)).toThrow('dynamicSlice: the tensor to slice must be a tf.Tensor, got object');
    expect(() => ops.dynamicSlice(X, 1, start, 4, 1)).toThrow('dynamicSlice: dim must be an integer from -1 to 0 (the tensor has rank 1), got 1');
    expect(() => ops.dynamicSlice(X, 0, 1 as unknown as tf.Tensor, 4, 1)).toThrow(
      'dynamicSlice: start must be an int32 tensor of one element (the offset, read each time the op runs), got number',
    );
    expect(() => ops.dynamicSlice(X, 0, tf.scalar(1), 4, 1)).toThrow('got a float32 tensor of shape []');
    expect(() => ops.dynamicSlice(X, 0, tf.tensor1d([1, 2], 'int32'), 4, 1)).toThrow('got a int32 tensor of shape [2]');
    expect(() => ops.dynamicSlice(X, 0, start, 0, 1)).toThrow('dynamicSlice: The start and end of a slice must be different.');
    expect(() => ops.dynamicSlice(X, 0, start, -2, 2)).toThrow('dynamicSlice: Taking a slice of a tensor with the end less than the start is not supported.');
    expect(() => ops.dynamicSlice(X, 0, start, 7, 1)).toThrow('dynamicSlice: The size of the slice (7) must be a factor of the slicing dimension (8).');
    expect(() => ops.dynamicSlice(X, 0, start, 16, 1)).toThrow('dynamicSlice: the size of the slice (16) is larger than dimension 0 (8)');
    expect(() => ops.dynamicSlice(X, 0, start, 4, 0)).toThrow('dynamicSlice: Slicing step must be at least 1, got 0');
  });

  it('costs the slice moved between tiles after the offset is sent, and takes the memory of its output', async () => {
    const executor = inferenceModel((x: tf.Tensor, start: tf.Tensor) => tf.neg(ops.dynamicSlice(x, 0, start, 32, 1)), {
      options: new Options().ipuTarget(ONE_TILE),
    });
    await executor.compile(tf.zeros([64, 32]), tf.scalar(0, 'int32'));
    const graph = executor.executable.graph;
    const node = graph.nodes.find((n) => n.kernel === 'poptfjs.DynamicSlice')!;
    const target = smallIpuTarget({ tiles: 8 });
    // The slice: 32 × 32 float32 = 4096 bytes, 512 a tile: exchanged at 4 bytes a cycle and copied at 8, after two vertices of 170; two syncs.
    expect(kernelCost(graph, node, target)).toEqual({ compute: 2 * 170 + 512 / 8, exchange: 512 / 4, sync: 2 * 90, temporaryBytes: 0 });
    // The slice is a copy, not a view: the input (8192 bytes), the offset (4) and the slice (4096) are live as it runs, the peak.
    const peak = executor.executable.hardware.memory.ipus[0]!.peak;
    expect(peak.working).toBe(8192 + 4 + 4096);
    expect(peak.during).toContain('poptfjs.DynamicSlice');
  });
});
