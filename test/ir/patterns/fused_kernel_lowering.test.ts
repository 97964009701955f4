import * as tf from '@tensorflow/tfjs';
import { afterAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../../lib/backend/backend_selection.js';
import { fusedKernelLowering } from '../../../lib/ir/patterns/fused_kernel_lowering.js';
import { traceInference, traceTraining } from '../../../lib/trace/trace_model.js';
import { expectSameResults, nodesOf, onWasmBackend, paramsOf } from './graph_results.js';

onWasmBackend();

const TRAINING = { backend: 'wasm', training: true };

/** The kernel each fused activation lowers to (none for linear). */
const ACTIVATION_KERNELS: Record<tf.fused.Activation, string | undefined> = {
  linear: undefined,
  relu: 'Relu',
  relu6: 'Relu6',
  elu: 'Elu',
  sigmoid: 'Sigmoid',
  leakyrelu: 'LeakyRelu',
  prelu: 'Prelu',
};
const ACTIVATIONS = Object.keys(ACTIVATION_KERNELS) as tf.fused.Activation[];

describe('FusedKernelLowering', () => {
  for (const activation of ACTIVATIONS) {
    it(`lowers _FusedMatMul with bias and ${activation} to BatchMatMul + Add + activation`, () => {
      const a = tf.randomNormal([6, 5]);
      const b = tf.randomNormal([5, 4]);
      const bias = tf.randomNormal([4]);
      const alpha = tf.tensor1d([0.1, 0.2, 0.3, 0.4]);
      const preluActivationWeights = activation === 'prelu' ? alpha : undefined;
      const fn = (x: tf.Tensor, w: tf.Tensor) => tf.fused.matMul({ a: x, b: w, bias, activation, preluActivationWeights, leakyreluAlpha: 0.3 });
      const { graph } = traceInference(fn, [a, b]);
      expect(nodesOf(graph, '_FusedMatMul')).toHaveLength(1);
      const { graph: lowered, count } = fusedKernelLowering.apply(graph, TRAINING);
      expect(count).toBe(1);
      expect(nodesOf(lowered, '_FusedMatMul')).toHaveLength(0);
      expect(nodesOf(lowered, 'BatchMatMul')).toHaveLength(1);
      expect(nodesOf(lowered, 'Add')).toHaveLength(1);
      const kernel = ACTIVATION_KERNELS[activation];
      if (kernel) expect(nodesOf(lowered, kernel)).toHaveLength(1);
      if (activation === 'leakyrelu') expect(nodesOf(lowered, 'LeakyRelu')[0]!.attrs.alpha).toBeCloseTo(0.3);
      expectSameResults(graph, lowered, { inputs: [a, b], params: new Map() });
    });
  }

  it('lowers a transposed _FusedMatMul without bias to one BatchMatMul with the same transposes', () => {
    const a = tf.randomNormal([2, 5, 3]);
    const b = tf.randomNormal([2, 4, 5]);
    const fn = (x: tf.Tensor, y: tf.Tensor) => tf.fused.matMul({ a: x, b: y, transposeA: true, transposeB: true, activation: 'elu' });
    const { graph } = traceInference(fn, [a, b]);
    const { graph: lowered, count } = fusedKernelLowering.apply(graph, TRAINING);
    expect(count).toBe(1);
    expect(nodesOf(lowered, 'BatchMatMul')[0]!.attrs).toEqual({ transposeA: true, transposeB: true });
    expect(nodesOf(lowered, 'Add')).toHaveLength(0);
    expectSameResults(graph, lowered, { inputs: [a, b], params: new Map() });
  });

  for (const activation of ['relu', 'prelu', 'leakyrelu'] as const) {
    it(`lowers FusedConv2D with bias and ${activation} to Conv2D + Add + activation`, () => {
      const x = tf.randomNormal([1, 5, 5, 2]);
      const filter = tf.randomNormal([3, 3, 2, 3]);
      const bias = tf.randomNormal([3]);
      const alpha = tf.tensor1d([0.1, 0.2, 0.3]);
      // Only with a prelu activation: wasm's FusedConv2D miscomputes relu when PReLU weights come along.
      const preluActivationWeights = activation === 'prelu' ? alpha : undefined;
      const fn = (input: tf.Tensor) =>
        tf.fused.conv2d({ x: input as tf.Tensor4D, filter: filter as tf.Tensor4D, strides: 2, pad: 'same', bias, activation, preluActivationWeights, leakyreluAlpha: 0.1 });
      const { graph } = traceInference(fn, [x]);
      expect(nodesOf(graph, 'FusedConv2D')).toHaveLength(1);
      const { graph: lowered, count } = fusedKernelLowering.apply(graph, TRAINING);
      expect(count).toBe(1);
      expect(lowered.nodes.map((n) => n.kernel)).toEqual(['Conv2D', 'Add', ACTIVATION_KERNELS[activation]]);
      expectSameResults(graph, lowered, { inputs: [x], params: new Map() });
    });
  }

  it('lowers FusedDepthwiseConv2D with bias and relu6 to DepthwiseConv2dNative + Add + Relu6', () => {
    const x = tf.randomNormal([1, 6, 6, 2]);
    const filter = tf.randomNormal([3, 3, 2, 2]);
    const bias = tf.randomNormal([4]);
    const fn = (input: tf.Tensor) => tf.fused.depthwiseConv2d({ x: input as tf.Tensor4D, filter: filter as tf.Tensor4D, strides: 1, pad: 'valid', bias, activation: 'relu6' });
    const { graph } = traceInference(fn, [x]);
    const { graph: lowered, count } = fusedKernelLowering.apply(graph, TRAINING);
    expect(count).toBe(1);
    expect(lowered.nodes.map((n) => n.kernel)).toEqual(['DepthwiseConv2dNative', 'Add', 'Relu6']);
    expectSameResults(graph, lowered, { inputs: [x], params: new Map() });
  });

  it('keeps fused kernels in inference graphs', () => {
    const fn = (x: tf.Tensor) => tf.fused.matMul({ a: x, b: tf.ones([3, 2]), activation: 'relu' });
    const { graph } = traceInference(fn, [tf.ones([4, 3])]);
    const result = fusedKernelLowering.apply(graph, { backend: 'wasm', training: false });
    expect(result.count).toBe(0);
    expect(result.graph).toBe(graph);
  });

  it('lowers the fused matmul of a traced training step and leaves the gradients unchanged', () => {
    const model = tf.sequential({ layers: [tf.layers.dense({ units: 6, inputShape: [8], activation: 'relu' }), tf.layers.dense({ units: 3, activation: 'softmax' })] });
    const x = tf.randomNormal([4, 8]);
    const y = tf.randomUniform([4, 3]);
    const { graph, variables } = traceTraining(model, 'meanSquaredError', [x, y]);
    const fused = nodesOf(graph, '_FusedMatMul').length;
    expect(fused).toBeGreaterThan(0);
    const { graph: lowered, count } = fusedKernelLowering.apply(graph, TRAINING);
    expect(count).toBe(fused);
    expect(nodesOf(lowered, '_FusedMatMul')).toHaveLength(0);
    expectSameResults(graph, lowered, { inputs: [x, y, tf.scalar(1)], params: paramsOf(variables) });
  });

  describe('on the cpu backend', () => {
    afterAll(async () => {
      await initBackend('wasm');
    });

    it('lines an NCHW FusedConv2D bias and PReLU weights up with the channels', async () => {
      await initBackend('cpu');
      const x = tf.randomNormal([1, 2, 5, 5]);
      const filter = tf.randomNormal([3, 3, 2, 3]);
      const bias = tf.randomNormal([3]);
      const alpha = tf.tensor1d([0.1, 0.2, 0.3]);
      const fn = (input: tf.Tensor) =>
        tf.fused.conv2d({
          x: input as tf.Tensor4D,
          filter: filter as tf.Tensor4D,
          strides: 1,
          pad: 'same',
          dataFormat: 'NCHW',
          bias,
          activation: 'prelu',
          preluActivationWeights: alpha,
        });
      const { graph } = traceInference(fn, [x]);
      const { graph: lowered, count } = fusedKernelLowering.apply(graph, { backend: 'cpu', training: true });
      expect(count).toBe(1);
      expect(lowered.nodes.map((n) => n.kernel)).toEqual(['Conv2D', 'Reshape', 'Add', 'Reshape', 'Prelu']);
      expect(nodesOf(lowered, 'Reshape').map((n) => n.attrs.shape)).toEqual([
        [3, 1, 1],
        [3, 1, 1],
      ]);
      expectSameResults(graph, lowered, { inputs: [x], params: new Map() });
    });
  });
});
