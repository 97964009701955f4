import { availableParallelism } from 'node:os';
import v8 from 'node:v8';
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { asksFusedMultiplyAdd } from '../../../lib/backend/multiply_add_attribute.js';
import { relaxedSimdSupported } from '../../../lib/backend/wasm_kernels/wasm_simd_routine.js';
import { routinesOnlyOnWasmThreads, wasmComputeThreads } from '../../../lib/backend/wasm_thread_pool.js';
import { MAX_WASM_THREADS } from '../../../lib/backend/wasm_threads.js';
import { MAX_OTHER_FLOPS, MIN_ROWS, multiplyAddConvolution } from '../../../lib/ir/patterns/multiply_add_convolution.js';
import { applyPatterns, Patterns } from '../../../lib/ir/patterns/patterns.js';
import { GraphInterpreter } from '../../../lib/runtime/graph_interpreter.js';
import { RandomSource } from '../../../lib/executable/random_source.js';
import { traceInference } from '../../../lib/trace/trace_model.js';
import { expectSameResults, nodesOf, onWasmBackend } from './graph_results.js';
import { withRelaxedSimd } from '../../helpers.js';

onWasmBackend();

withRelaxedSimd();

const CONTEXT = { backend: 'wasm', training: false };

/** Two convolutions (3 × 3 relu then 1 × 1 with `activation`) of a [1, size, size, 8] input, and optionally a dense layer of `dense` units after them. */
function convolutions(size: number, dense = 0, activation: 'relu' | 'relu6' | 'elu' = 'relu') {
  const x = tf.randomNormal([1, size, size, 8], 0, 1, 'float32', 1);
  const f1 = tf.randomNormal([3, 3, 8, 16], 0, 0.3, 'float32', 2) as tf.Tensor4D;
  const b1 = tf.randomNormal([16], 0, 1, 'float32', 3);
  const f2 = tf.randomNormal([1, 1, 16, 12], 0, 0.3, 'float32', 4) as tf.Tensor4D;
  const w = tf.randomNormal([size * size * 12, Math.max(dense, 1)], 0, 0.1, 'float32', 5) as tf.Tensor2D;
  const fn = (input: tf.Tensor) => {
    const h = tf.fused.conv2d({ x: input as tf.Tensor4D, filter: f1, strides: 1, pad: 'same', bias: b1, activation: 'relu' });
    const y = tf.fused.conv2d({ x: h, filter: f2, strides: 1, pad: 'valid', activation });
    return dense > 0 ? tf.matMul(tf.reshape(y, [1, -1]), w) : y;
  };
  return { graph: traceInference(fn, [x]).graph, feeds: { inputs: [x], params: new Map() } };
}

describe('MultiplyAddConvolution', () => {
  it('marks every convolution of a graph whose convolutions all have enough output positions, with the same results within rounding', () => {
    expect(16 * 16).toBeGreaterThanOrEqual(MIN_ROWS);
    const { graph, feeds } = convolutions(16);
    const patterns = new Patterns('NoPatterns');
    for (const name of ['MultiplyAddConvolution', 'DeadCodeElimination']) patterns.enablePattern(name, true);
    const { graph: marked, fired } = applyPatterns(graph, patterns, CONTEXT);
    expect(fired.get('MultiplyAddConvolution')).toBe(2);
    expect(nodesOf(marked, 'FusedConv2D').map((n) => [asksFusedMultiplyAdd(n.attrs), n.attrs.activation])).toEqual([
      [true, 'relu'],
      [true, 'relu'],
    ]);
    expectSameResults(graph, marked, feeds);
    // A second round finds nothing left to mark.
    expect(multiplyAddConvolution.apply(marked, CONTEXT).count).toBe(0);
  });

  it('marks convolutions clipped at 6 (relu6), not those with another activation (a small one runs on its own kernel)', () => {
    const { graph, feeds } = convolutions(16, 0, 'relu6');
    const { graph: marked } = applyPatterns(graph, new Patterns('Default'), CONTEXT);
    expect(nodesOf(marked, 'FusedConv2D').map((n) => [asksFusedMultiplyAdd(n.attrs), n.attrs.activation])).toEqual([
      [true, 'relu'],
      [true, 'relu6'],
    ]);
    expectSameResults(graph, marked, feeds);
    const { graph: elu } = applyPatterns(convolutions(16, 0, 'elu').graph, new Patterns('Default'), CONTEXT);
    expect(nodesOf(elu, 'FusedConv2D').map((n) => [asksFusedMultiplyAdd(n.attrs), n.attrs.activation])).toEqual([
      [true, 'relu'],
      [false, 'elu'],
    ]);
  });

  it('marks 3 × 3 depthwise convolutions with the others, whatever their output positions', () => {
    const x = tf.randomNormal([1, 14, 14, 8], 0, 1, 'float32', 1);
    const depthwise = tf.randomNormal([3, 3, 8, 1], 0, 0.3, 'float32', 2) as tf.Tensor4D;
    const pointwise = tf.randomNormal([1, 1, 8, 16], 0, 0.3, 'float32', 3) as tf.Tensor4D;
    const bias = tf.randomNormal([8], 0, 1, 'float32', 4);
    const fn = (input: tf.Tensor) => {
      const h = tf.fused.depthwiseConv2d({ x: input as tf.Tensor4D, filter: depthwise, strides: 2, pad: 'same', bias, activation: 'relu6' });
      return tf.fused.conv2d({ x: tf.image.resizeNearestNeighbor(h, [14, 14]), filter: pointwise, strides: 1, pad: 'valid', activation: 'relu6' });
    };
    const { graph } = traceInference(fn, [x]);
    const { graph: marked } = applyPatterns(graph, new Patterns('Default'), CONTEXT);
    expect(nodesOf(marked, 'FusedDepthwiseConv2D').map((n) => asksFusedMultiplyAdd(n.attrs))).toEqual([true]);
    expect(nodesOf(marked, 'FusedConv2D').map((n) => asksFusedMultiplyAdd(n.attrs))).toEqual([true]);
    expectSameResults(graph, marked, { inputs: [x], params: new Map() });
  });

  it("marks a feed-forward block's products of weight matrices, not one of columns out of fours or of fewer rows, with the same results within rounding", () => {
    const weight = (shape: number[], seed: number) => tf.randomNormal(shape, 0, 0.1, 'float32', seed);
    const [w1, b1, w2, b2, w3] = [weight([64, 128], 1), weight([128], 2), weight([128, 64], 3), weight([64], 4), weight([64, 6], 5)];
    const block = (rows: number) => {
      const x = tf.randomNormal([1, rows, 64], 0, 1, 'float32', 6);
      const fn = (input: tf.Tensor) => {
        const h = tf.fused.matMul({ a: input as tf.Tensor3D, b: w1.expandDims(0) as tf.Tensor3D, bias: b1, activation: 'relu' });
        const y = tf.fused.matMul({ a: h, b: w2.expandDims(0) as tf.Tensor3D, bias: b2 });
        return tf.fused.matMul({ a: y, b: w3.expandDims(0) as tf.Tensor3D });
      };
      return { graph: traceInference(fn, [x]).graph, feeds: { inputs: [x], params: new Map() } };
    };
    const { graph, feeds } = block(16);
    const { graph: marked } = applyPatterns(graph, new Patterns('Default'), CONTEXT);
    expect(nodesOf(marked, '_FusedMatMul').map((n) => asksFusedMultiplyAdd(n.attrs))).toEqual([true, true, false]);
    expectSameResults(graph, marked, feeds);
    expect(2).toBeLessThan(MIN_ROWS);
    expect(multiplyAddConvolution.apply(block(2).graph, CONTEXT).count).toBe(0);
  });

  it('leaves alone a graph with a convolution of few output positions or a large other product, training graphs, other backends, and engines without relaxed SIMD', () => {
    expect(1 * 1).toBeLessThan(MIN_ROWS);
    expect(multiplyAddConvolution.apply(convolutions(1).graph, CONTEXT).count).toBe(0);
    // A dense layer of 16 · 16 · 12 by 800: 4.9 MFLOP, more than MAX_OTHER_FLOPS.
    expect(2 * 16 * 16 * 12 * 800).toBeGreaterThan(MAX_OTHER_FLOPS);
    expect(multiplyAddConvolution.apply(convolutions(16, 800).graph, CONTEXT).count).toBe(0);
    const { graph } = convolutions(16);
    expect(multiplyAddConvolution.apply(graph, { backend: 'wasm', training: true }).count).toBe(0);
    expect(multiplyAddConvolution.apply(graph, { backend: 'cpu', training: false }).count).toBe(0);
    v8.setFlagsFromString('--no-experimental-wasm-relaxed-simd');
    try {
      if (!relaxedSimdSupported()) expect(multiplyAddConvolution.apply(graph, CONTEXT).count).toBe(0);
    } finally {
      v8.setFlagsFromString('--experimental-wasm-relaxed-simd');
    }
    expect(multiplyAddConvolution.apply(graph, CONTEXT).count).toBe(2);
  });

  it.skipIf(Math.min(availableParallelism(), MAX_WASM_THREADS) < 2 || process.env.POPTFJS_WASM_THREADS !== undefined)(
    "runs a marked graph's large kernels with XNNPACK's pool left to the routines, and puts back the threads of before",
    () => {
      const { graph, feeds } = convolutions(64);
      const { graph: marked } = applyPatterns(graph, new Patterns('Default'), CONTEXT);
      expect(nodesOf(marked, 'FusedConv2D').every((n) => asksFusedMultiplyAdd(n.attrs))).toBe(true);
      const seen: boolean[] = [];
      const before = wasmComputeThreads();
      const interpreter = new GraphInterpreter(marked, { beforeKernel: (node) => node.kernel === 'FusedConv2D' && seen.push(routinesOnlyOnWasmThreads()) });
      const out = interpreter.run({ inputs: feeds.inputs, params: feeds.params, random: new RandomSource(0) });
      interpreter.dispose();
      // The 3 × 3 convolution (5.3 MFLOP) is large; when other processes hold the cores it runs on one thread.
      expect([
        [true, false],
        [false, false],
      ]).toContainEqual(seen);
      expect(wasmComputeThreads()).toBe(before);
      expect(routinesOnlyOnWasmThreads()).toBe(false);
      tf.dispose([...out.values()]);
    },
  );
});
