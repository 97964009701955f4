import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { transposedMatMul } from '../../../lib/ir/patterns/transposed_matmul.js';
import { weightLayoutCaching } from '../../../lib/ir/patterns/weight_layout_caching.js';
import { traceInference } from '../../../lib/trace/trace_model.js';
import { expectSameResults, nodesOf, onWasmBackend, paramsOf } from './graph_results.js';

onWasmBackend();

const CONTEXT = { backend: 'wasm', training: true };

describe('WeightLayoutCaching', () => {
  it('transposes a weight used transposed by several matmuls once', () => {
    const w = tf.variable(tf.randomNormal([4, 3]), true, 'tied_w');
    const fn = (x: tf.Tensor, y: tf.Tensor) => tf.add(tf.matMul(x, tf.transpose(w)), tf.matMul(y, tf.transpose(w)));
    const x = tf.randomNormal([2, 3]);
    const y = tf.randomNormal([2, 3]);
    const { graph, variables } = traceInference(fn, [x, y]);
    expect(nodesOf(graph, 'Transpose')).toHaveLength(2);
    const { graph: cached, count } = weightLayoutCaching.apply(graph, CONTEXT);
    expect(count).toBe(1);
    expect(nodesOf(cached, 'Transpose')).toHaveLength(1);
    expectSameResults(graph, cached, { inputs: [x, y], params: paramsOf(variables) });
    w.dispose();
  });

  it('merges the transposes TransposedMatMul makes explicit, also through a Reshape of the weight', () => {
    const w = tf.variable(tf.randomNormal([4, 3]), true, 'reshaped_w');
    const fn = (x: tf.Tensor, y: tf.Tensor) => {
      const w3 = tf.reshape(w, [1, 4, 3]);
      return tf.add(tf.matMul(x, w3, false, true), tf.matMul(y, w3, false, true));
    };
    const x = tf.randomNormal([1, 2, 3]);
    const y = tf.randomNormal([1, 2, 3]);
    const { graph, variables } = traceInference(fn, [x, y]);
    const explicit = transposedMatMul.apply(graph, CONTEXT).graph;
    expect(nodesOf(explicit, 'Transpose')).toHaveLength(2);
    const { graph: cached, count } = weightLayoutCaching.apply(explicit, CONTEXT);
    expect(count).toBe(1);
    expect(nodesOf(cached, 'Transpose')).toHaveLength(1);
    expectSameResults(graph, cached, { inputs: [x, y], params: paramsOf(variables) });
    w.dispose();
  });

  it('leaves transposes of activations and different permutations alone', () => {
    const fn = (x: tf.Tensor) => tf.add(tf.sum(tf.transpose(x, [1, 0, 2])), tf.add(tf.sum(tf.transpose(x, [1, 0, 2])), tf.sum(tf.transpose(x, [2, 1, 0]))));
    const { graph } = traceInference(fn, [tf.ones([2, 3, 4])]);
    expect(weightLayoutCaching.apply(graph, CONTEXT).count).toBe(0);
  });
});
