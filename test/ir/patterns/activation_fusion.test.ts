import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { activationFusion } from '../../../lib/ir/patterns/activation_fusion.js';
import { noOpRemoval } from '../../../lib/ir/patterns/no_op_removal.js';
import { applyPatterns, Patterns } from '../../../lib/ir/patterns/patterns.js';
import { traceInference } from '../../../lib/trace/trace_model.js';
import { expectSameResults, nodesOf, onWasmBackend } from './graph_results.js';

onWasmBackend();

const CONTEXT = { backend: 'wasm', training: false };

function fusedConv(x: tf.Tensor, filter: tf.Tensor, bias: tf.Tensor): tf.Tensor {
  return tf.fused.conv2d({ x: x as tf.Tensor4D, filter: filter as tf.Tensor4D, strides: 1, pad: 'same', bias });
}

describe('ActivationFusion', () => {
  it('makes Relu, Maximum with 0 then Minimum with 6 (relu6), Sigmoid and LeakyRelu the activation of the fused kernel they read', () => {
    const x = tf.randomNormal([1, 5, 5, 2], 0, 3);
    const filter = tf.randomNormal([3, 3, 2, 4]);
    const bias = tf.randomNormal([4]);
    const w = tf.randomNormal([1, 4, 3]);
    const fn = (input: tf.Tensor) => {
      const relu = tf.relu(fusedConv(input, filter, bias));
      const relu6 = tf.minimum(tf.maximum(fusedConv(relu, tf.randomNormal([3, 3, 4, 2], 0, 1, 'float32', 1), tf.ones([2])), 0), 6);
      const sigmoid = tf.sigmoid(fusedConv(relu6, filter, bias));
      return tf.leakyRelu(tf.fused.matMul({ a: tf.reshape(sigmoid, [1, 25, 4]), b: w, bias: tf.ones([3]) }), 0.3);
    };
    // The matrix product's same-shape Reshapes removed first, as the Default patterns do.
    const graph = noOpRemoval.apply(traceInference(fn, [x]).graph, CONTEXT).graph;
    const { graph: fused, count } = activationFusion.apply(graph, CONTEXT);
    expect(count).toBe(5);
    expectSameResults(graph, fused, { inputs: [x], params: new Map() });
    const patterns = new Patterns('NoPatterns');
    for (const name of ['ActivationFusion', 'DeadCodeElimination']) patterns.enablePattern(name, true);
    const cleaned = applyPatterns(graph, patterns, CONTEXT).graph;
    expect(nodesOf(cleaned, 'FusedConv2D').map((n) => n.attrs.activation)).toEqual(['relu', 'relu6', 'sigmoid']);
    expect(nodesOf(cleaned, '_FusedMatMul').map((n) => [n.attrs.activation, n.attrs.leakyreluAlpha])).toEqual([['leakyrelu', 0.3]]);
    for (const kernel of ['Relu', 'Maximum', 'Minimum', 'Sigmoid', 'LeakyRelu']) expect(nodesOf(cleaned, kernel)).toHaveLength(0);
    expectSameResults(graph, cleaned, { inputs: [x], params: new Map() });
  });

  it('fuses an activation that reads a Reshape of the fused result, the Reshape then following the fused kernel', () => {
    const x = tf.randomNormal([1, 6, 4]);
    const w = tf.randomNormal([1, 4, 3]);
    const traced = traceInference((input: tf.Tensor) => tf.sigmoid(tf.reshape(tf.fused.matMul({ a: input, b: w, bias: tf.ones([3]) }), [2, 3, 3])), [x]).graph;
    const graph = noOpRemoval.apply(traced, CONTEXT).graph;
    const { graph: rewritten, count } = activationFusion.apply(graph, CONTEXT);
    expect(count).toBe(1);
    expectSameResults(graph, rewritten, { inputs: [x], params: new Map() });
    const patterns = new Patterns('NoPatterns');
    for (const name of ['ActivationFusion', 'DeadCodeElimination']) patterns.enablePattern(name, true);
    const cleaned = applyPatterns(graph, patterns, CONTEXT).graph;
    expect(nodesOf(cleaned, '_FusedMatMul').map((n) => n.attrs.activation)).toEqual(['sigmoid']);
    expect(nodesOf(cleaned, 'Sigmoid')).toHaveLength(0);
    expect(cleaned.values[cleaned.roles.outputs[0]!]!.shape).toEqual([2, 3, 3]);
  });

  it('leaves an activation alone when the fused result is read elsewhere, already activated, or clipped at another bound', () => {
    const x = tf.randomNormal([1, 4, 4, 2]);
    const filter = tf.randomNormal([3, 3, 2, 2]);
    const bias = tf.randomNormal([2]);
    const { graph } = traceInference(
      (input: tf.Tensor) => {
        const conv = fusedConv(input, filter, bias);
        const clipped = tf.minimum(tf.maximum(fusedConv(input, filter, bias), 1), 6);
        return [tf.relu(conv), conv, clipped];
      },
      [x],
    );
    expect(activationFusion.apply(graph, CONTEXT).count).toBe(0);
  });
});
