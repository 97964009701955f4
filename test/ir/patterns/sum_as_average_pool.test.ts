import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { sumAsAveragePool } from '../../../lib/ir/patterns/sum_as_average_pool.js';
import { traceInference, traceTraining } from '../../../lib/trace/trace_model.js';
import { expectSameResults, nodesOf, onWasmBackend, paramsOf } from './graph_results.js';
import { smallCnn } from '../../helpers.js';

onWasmBackend();

const WASM = { backend: 'wasm', training: false };

/** Sums of float32 values in another order: equal within a few float32 roundings per element summed. */
const RTOL = 1e-4;

describe('SumAsAveragePool', () => {
  const rewritten: Array<[string, number[], (x: tf.Tensor) => tf.Tensor, number[]]> = [
    ['the leading axes (a bias gradient)', [64, 28, 28, 16], (x) => tf.sum(x, [0, 1, 2]), [1, 1, 50176, 16]],
    ['the leading axes, keeping dims', [64, 14, 14, 32], (x) => tf.sum(x, [0, 1, 2], true), [1, 1, 12544, 32]],
    ['the spatial axes (a global pooling)', [16, 28, 28, 8], (x) => tf.sum(x, [1, 2]), [16, 1, 784, 8]],
    ['negative axes, in any order', [8, 64, 64, 8], (x) => tf.sum(x, [-2, 1]), [8, 1, 4096, 8]],
    ['the first axis of a matrix', [256, 512], (x) => tf.sum(x, 0), [1, 1, 256, 512]],
  ];
  for (const [what, shape, fn, pooled] of rewritten) {
    it(`turns a large sum over ${what} into an average pooling with the same result`, () => {
      const x = tf.randomNormal(shape);
      const { graph } = traceInference(fn, [x]);
      const { graph: after, count } = sumAsAveragePool.apply(graph, WASM);
      expect(count).toBe(1);
      expect(nodesOf(after, 'Sum')).toHaveLength(0);
      const [pool] = nodesOf(after, 'AvgPool');
      expect(after.values[pool!.inputs[0]!]!.shape).toEqual(pooled);
      expect(pool!.attrs).toEqual({ filterSize: [1, pooled[2]], strides: [1, pooled[2]], pad: 'valid' });
      expectSameResults(graph, after, { inputs: [x], params: new Map() }, RTOL);
      x.dispose();
    });
  }

  it('turns a large mean over the spatial axes (a global average pooling) into an average pooling alone', () => {
    const x = tf.randomNormal([1, 13, 13, 1000]);
    const { graph } = traceInference((t: tf.Tensor) => tf.mean(t, [1, 2], true), [x]);
    const { graph: after, count } = sumAsAveragePool.apply(graph, WASM);
    expect(count).toBe(1);
    expect(nodesOf(after, 'Mean')).toHaveLength(0);
    expect(nodesOf(after, 'Multiply')).toHaveLength(0);
    expect(nodesOf(after, 'AvgPool')[0]!.attrs).toEqual({ filterSize: [1, 169], strides: [1, 169], pad: 'valid' });
    expectSameResults(graph, after, { inputs: [x], params: new Map() }, RTOL);
    x.dispose();
  });

  const kept: Array<[string, number[], (x: tf.Tensor) => tf.Tensor, tf.DataType?]> = [
    ['a small tensor', [64, 128], (x) => tf.sum(x, 0)],
    ['a sum over the last axis', [64, 512], (x) => tf.sum(x, 1)],
    ['a sum over every axis', [64, 512], (x) => tf.sum(x)],
    ['axes that are not adjacent', [64, 28, 28, 16], (x) => tf.sum(x, [0, 2])],
    ['a narrow last axis', [4096, 4], (x) => tf.sum(x, 0)],
    ['an int32 tensor', [64, 512], (x) => tf.sum(x, 0), 'int32'],
  ];
  for (const [what, shape, fn, dtype] of kept) {
    it(`leaves ${what} alone`, () => {
      const x = tf.ones(shape, dtype);
      const { graph } = traceInference(fn, [x]);
      const result = sumAsAveragePool.apply(graph, WASM);
      expect(result.count).toBe(0);
      expect(result.graph).toBe(graph);
      x.dispose();
    });
  }

  it('stays off on backends whose Sum is not slower (cpu, tensorflow)', () => {
    const { graph } = traceInference((x: tf.Tensor) => tf.sum(x, [0, 1, 2]), [tf.ones([64, 28, 28, 16])]);
    for (const backend of ['cpu', 'tensorflow']) {
      const result = sumAsAveragePool.apply(graph, { backend, training: true });
      expect(result.count).toBe(0);
      expect(result.graph).toBe(graph);
    }
  });

  it('rewrites the bias gradients of a CNN and leaves the loss and gradients unchanged', () => {
    const model = smallCnn();
    const x = tf.randomNormal([64, 28, 28, 1]);
    const y = tf.oneHot(tf.randomUniform([64], 0, 10, 'int32'), 10).toFloat();
    const { graph, variables } = traceTraining(model, 'categoricalCrossentropy', [x, y]);
    const { graph: after, count } = sumAsAveragePool.apply(graph, { backend: 'wasm', training: true });
    expect(count).toBe(2);
    expect(nodesOf(after, 'AvgPool')).toHaveLength(2);
    expectSameResults(graph, after, { inputs: [x, y, tf.scalar(1)], params: paramsOf(variables) }, RTOL);
    model.dispose();
  });
});
