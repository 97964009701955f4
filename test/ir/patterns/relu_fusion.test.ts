/**
 * The `AddReluFusion` and `ReluGradFusion` patterns on the traced training
 * step of a small CNN on wasm: the bias adds and relus become
 * `poptfjs.AddRelu`, the relu gradients `poptfjs.ReluGrad`, and the loss,
 * outputs and gradients stay the same bit for bit, NaN and -0 included.
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { POPTFJS_KERNELS } from '../../../lib/backend/kernel_catalogue/kernel_catalogue.js';
import type { Graph } from '../../../lib/ir/graph.js';
import { addReluFusion } from '../../../lib/ir/patterns/add_relu_fusion.js';
import { applyPatterns, Patterns } from '../../../lib/ir/patterns/patterns.js';
import { reluGradFusion } from '../../../lib/ir/patterns/relu_grad_fusion.js';
import { traceInference, traceTraining } from '../../../lib/trace/trace_model.js';
import { nodesOf, onWasmBackend, paramsOf, runRoles } from './graph_results.js';

onWasmBackend();

/** A CNN whose channel counts (3, 5) are not multiples of 4: conv relu, max pool, conv relu, dense softmax. */
function cnn(): tf.LayersModel {
  const init = (seed: number) => tf.initializers.glorotUniform({ seed });
  return tf.sequential({
    layers: [
      tf.layers.conv2d({ inputShape: [9, 9, 1], filters: 3, kernelSize: 3, padding: 'same', activation: 'relu', kernelInitializer: init(1), biasInitializer: 'randomNormal' }),
      tf.layers.maxPooling2d({ poolSize: 2 }),
      tf.layers.conv2d({ filters: 5, kernelSize: 3, padding: 'same', activation: 'relu', kernelInitializer: init(2), biasInitializer: 'randomNormal' }),
      tf.layers.flatten(),
      tf.layers.dense({ units: 4, activation: 'softmax', kernelInitializer: init(3) }),
    ],
  });
}

/** The training step of {@link cnn} on a batch of 6 with a NaN pixel and -0 pixels in the last image. */
function tracedStep() {
  const model = cnn();
  const pixels = tf.randomNormal([6, 9, 9, 1], 0, 1, 'float32', 7).dataSync().slice();
  pixels[5 * 81 + 40] = Number.NaN;
  for (let i = 5 * 81; i < 5 * 81 + 20; i++) pixels[i] = -0;
  const x = tf.tensor4d(pixels, [6, 9, 9, 1]);
  const y = tf.oneHot(tf.tensor1d([0, 1, 2, 3, 0, 1], 'int32'), 4).toFloat();
  const { graph, variables } = traceTraining(model, 'categoricalCrossentropy', [x, y]);
  return { graph, feeds: { inputs: [x, y, tf.scalar(1)], params: paramsOf(variables) } };
}

const withoutReluFusions = () => new Patterns('Default').enablePattern(addReluFusion.name, false).enablePattern(reluGradFusion.name, false);

/** Every role's values as bit patterns. */
function roleBits(graph: Graph, feeds: ReturnType<typeof tracedStep>['feeds']): Map<string, number[]> {
  const results = runRoles(graph, feeds);
  const bits = new Map([...results].map(([role, t]) => [role, Array.from(new Uint32Array((t.dataSync() as Float32Array).slice().buffer))]));
  tf.dispose([...results.values()]);
  return bits;
}

describe('AddReluFusion and ReluGradFusion on a CNN training step on wasm', () => {
  it('fuse both bias adds and relus, and both relu gradients', () => {
    const { graph } = tracedStep();
    expect(nodesOf(graph, 'Relu')).toHaveLength(2);
    expect(nodesOf(graph, 'Step')).toHaveLength(2);
    const { graph: rewritten, fired } = applyPatterns(graph, new Patterns('Default'), { backend: 'wasm', training: true });
    expect(fired.get('AddReluFusion')).toBe(2);
    expect(fired.get('ReluGradFusion')).toBe(2);
    expect(nodesOf(rewritten, 'Relu')).toHaveLength(0);
    expect(nodesOf(rewritten, 'Step')).toHaveLength(0);
    const addRelus = nodesOf(rewritten, POPTFJS_KERNELS.addRelu);
    expect(addRelus.map((n) => rewritten.values[n.inputs[1]!]!.shape)).toEqual([[3], [5]]);
    // Each relu gradient reads the sum its AddRelu wrote.
    const gradients = nodesOf(rewritten, POPTFJS_KERNELS.reluGrad);
    expect(gradients.map((n) => n.inputs[1]).sort()).toEqual(addRelus.map((n) => n.outputs[0]).sort());
  });

  it('keep the loss, the outputs and the gradients bit for bit, with a NaN and -0 in the input', () => {
    const { graph, feeds } = tracedStep();
    const fused = applyPatterns(graph, new Patterns('Default'), { backend: 'wasm', training: true }).graph;
    const unfused = applyPatterns(graph, withoutReluFusions(), { backend: 'wasm', training: true }).graph;
    expect(nodesOf(unfused, POPTFJS_KERNELS.addRelu)).toHaveLength(0);
    const expected = roleBits(unfused, feeds);
    const actual = roleBits(fused, feeds);
    expect([...actual.keys()]).toEqual([...expected.keys()]);
    for (const [role, bits] of expected) expect(actual.get(role), role).toEqual(bits);
    // The NaN pixel reaches the gradients: the case covers NaN.
    expect([...expected.values()].some((bits) => bits.some((b) => (b & 0x7fffffff) > 0x7f800000))).toBe(true);
  });

  it('leave inference graphs and other backends alone', () => {
    const { graph } = tracedStep();
    const onCpu = applyPatterns(graph, new Patterns('Default'), { backend: 'cpu', training: true }).fired;
    expect(onCpu.has('AddReluFusion') || onCpu.has('ReluGradFusion')).toBe(false);
    const model = tf.sequential({ layers: [tf.layers.dense({ units: 3, inputShape: [4] }), tf.layers.reLU()] });
    const { graph: inference } = traceInference(model, [tf.ones([2, 4])]);
    expect(addReluFusion.apply(inference, { backend: 'wasm', training: false }).count).toBe(0);
  });

  it('keep a relu gradient whose Step something else reads too', () => {
    const dense = tf.sequential({ layers: [tf.layers.dense({ units: 3, inputShape: [4], activation: 'relu' })] });
    const { graph } = traceTraining(dense, 'meanSquaredError', [tf.ones([2, 4]), tf.ones([2, 3])]);
    const context = { backend: 'wasm', training: true };
    expect(applyPatterns(graph, new Patterns('Default'), context).fired.get('ReluGradFusion')).toBe(1);
    const [step] = nodesOf(graph, 'Step');
    const readTwice: Graph = { ...graph, roles: { ...graph.roles, outputs: [...graph.roles.outputs, step!.outputs[0]!] } };
    const { graph: rewritten, fired } = applyPatterns(readTwice, new Patterns('Default'), context);
    expect(fired.has('ReluGradFusion')).toBe(false);
    expect(nodesOf(rewritten, 'Step')).toHaveLength(1);
  });
});
