import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { POPTFJS_KERNELS } from '../../../lib/backend/kernel_catalogue/kernel_catalogue.js';
import { concatSplitting, MIN_JOINED_BYTES } from '../../../lib/ir/patterns/concat_splitting.js';
import { applyPatterns, Patterns } from '../../../lib/ir/patterns/patterns.js';
import { traceInference } from '../../../lib/trace/trace_model.js';
import { expectSameResults, nodesOf, onWasmBackend } from './graph_results.js';

onWasmBackend();

const CONTEXT = { backend: 'wasm', training: false };

/** A 1 × 1 convolution (with bias, and relu or none) of the channel concatenation of two [1, 32, 32, channels] tensors. */
function joinedAndConvolved(activation: 'relu' | 'linear', channels: readonly [number, number], kernel = 1) {
  const a = tf.randomNormal([1, 32, 32, channels[0]], 0, 1, 'float32', 1);
  const b = tf.randomNormal([1, 32, 32, channels[1]], 0, 1, 'float32', 2);
  const filter = tf.randomNormal([kernel, kernel, channels[0] + channels[1], 8], 0, 1, 'float32', 3) as tf.Tensor4D;
  const bias = tf.randomNormal([8], 0, 1, 'float32', 4);
  const fn = (x: tf.Tensor, y: tf.Tensor) => tf.fused.conv2d({ x: tf.concat([tf.exp(x), tf.neg(y)], 3) as tf.Tensor4D, filter, strides: 1, pad: 'same', bias, activation });
  return { graph: traceInference(fn, [a, b]).graph, feeds: { inputs: [a, b], params: new Map() } };
}

describe('ConcatSplitting', () => {
  it('convolves each part of a large channel concatenation with its slice of the filter and adds them, with the relu in one AddRelu', () => {
    expect(4 * 32 * 32 * 128).toBeGreaterThanOrEqual(MIN_JOINED_BYTES);
    const { graph, feeds } = joinedAndConvolved('relu', [48, 80]);
    const patterns = new Patterns('NoPatterns');
    for (const name of ['ConcatSplitting', 'DeadCodeElimination']) patterns.enablePattern(name, true);
    const { graph: split, fired } = applyPatterns(graph, patterns, CONTEXT);
    expect(fired.get('ConcatSplitting')).toBe(1);
    expect(nodesOf(split, 'Concat')).toHaveLength(0);
    expect(nodesOf(split, 'Slice').map((n) => [n.attrs.begin, n.attrs.size])).toEqual([
      [
        [0, 0, 0, 0],
        [1, 1, 48, 8],
      ],
      [
        [0, 0, 48, 0],
        [1, 1, 80, 8],
      ],
    ]);
    expect(nodesOf(split, 'FusedConv2D').map((n) => [n.inputNames, n.attrs.activation])).toEqual([
      [['x', 'filter', 'bias'], 'linear'],
      [['x', 'filter'], 'linear'],
    ]);
    expect(nodesOf(split, POPTFJS_KERNELS.addRelu)).toHaveLength(1);
    expectSameResults(graph, split, feeds);
  });

  it('adds the parts with an Add when the convolution has no activation', () => {
    const { graph, feeds } = joinedAndConvolved('linear', [64, 64]);
    const { graph: split, count } = concatSplitting.apply(graph, CONTEXT);
    expect(count).toBe(1);
    expect(nodesOf(split, 'Add')).toHaveLength(1);
    expect(nodesOf(split, POPTFJS_KERNELS.addRelu)).toHaveLength(0);
    expectSameResults(graph, split, feeds);
  });

  it('leaves alone a small concatenation, a 3 × 3 convolution, other backends and training graphs', () => {
    expect(concatSplitting.apply(joinedAndConvolved('relu', [16, 16]).graph, CONTEXT).count).toBe(0);
    const { graph } = joinedAndConvolved('relu', [64, 64], 3);
    expect(concatSplitting.apply(graph, CONTEXT).count).toBe(0);
    const large = joinedAndConvolved('relu', [64, 64]).graph;
    expect(concatSplitting.apply(large, { backend: 'cpu', training: false }).count).toBe(0);
    expect(concatSplitting.apply(large, { backend: 'wasm', training: true }).count).toBe(0);
  });
});
