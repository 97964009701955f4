import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import type { Graph, Value } from '../../../lib/ir/graph.js';
import { constantFolding, FOLDED_ELEMENTS_LIMIT } from '../../../lib/ir/patterns/constant_folding.js';
import { traceInference, traceTraining } from '../../../lib/trace/trace_model.js';
import { expectSameResults, nodesOf, onWasmBackend, paramsOf } from './graph_results.js';

onWasmBackend();

const CONTEXT = { backend: 'wasm', training: false };

function constants(graph: Graph): Value[] {
  return graph.values.filter((v) => v.source.kind === 'constant');
}

describe('ConstantFolding', () => {
  it('replaces a chain of kernels on constants by the constant they compute, in one pass', () => {
    const scale = tf.tensor1d([1, 2, 3]);
    const fn = (x: tf.Tensor) => tf.add(x, tf.exp(tf.mul(scale, tf.scalar(0.5))));
    const x = tf.tensor1d([1, 1, 1]);
    const { graph } = traceInference(fn, [x]);
    const { graph: folded, count } = constantFolding.apply(graph, CONTEXT);
    expect(count).toBe(2);
    expect(folded.nodes.map((n) => n.kernel)).toEqual(['Add']);
    const add = folded.nodes[0]!;
    const addend = folded.values[add.inputs[1]!]!;
    expect(addend.source.kind).toBe('constant');
    const data = Array.from((addend.source as { data: Float32Array }).data);
    [0.5, 1, 1.5].forEach((v, i) => expect(data[i]).toBeCloseTo(Math.exp(v), 5));
    expectSameResults(graph, folded, { inputs: [x], params: new Map() });
  });

  it('folds kernels with several outputs and integer or boolean results', () => {
    const fn = (x: tf.Tensor) => {
      const [first, second] = tf.split(tf.tensor1d([1, 2, 3, 4], 'int32'), 2);
      return tf.where(tf.greater(first!, tf.scalar(1, 'int32')), x, tf.cast(second!, 'float32'));
    };
    const x = tf.tensor1d([10, 20]);
    const { graph } = traceInference(fn, [x]);
    const { graph: folded, count } = constantFolding.apply(graph, CONTEXT);
    expect(count).toBe(5);
    expect(folded.nodes.map((n) => n.kernel)).toEqual(['Identity', 'Select']);
    expect(
      constants(folded)
        .map((v) => v.dtype)
        .sort(),
    ).toEqual(['bool', 'float32']);
    expectSameResults(graph, folded, { inputs: [x], params: new Map() });
  });

  it('never folds random draws, nor what depends on them', () => {
    const fn = (x: tf.Tensor) => tf.add(x, tf.mul(tf.randomUniform([50]), tf.scalar(2)));
    const { graph } = traceInference(fn, [tf.zeros([50])]);
    expect(nodesOf(graph, 'poptfjs.RandomUniform')).toHaveLength(1);
    const result = constantFolding.apply(graph, CONTEXT);
    expect(result.count).toBe(0);
    expect(result.graph).toBe(graph);
  });

  it(`leaves outputs above ${FOLDED_ELEMENTS_LIMIT} elements unfolded`, () => {
    const fn = (x: tf.Tensor) => tf.add(x, tf.sum(tf.tile(tf.ones([1]), [FOLDED_ELEMENTS_LIMIT + 1])));
    const { graph } = traceInference(fn, [tf.zeros([1])]);
    const result = constantFolding.apply(graph, CONTEXT);
    expect(result.count).toBe(0);
    expect(nodesOf(result.graph, 'Tile')).toHaveLength(1);
  });

  it('folds the constant arithmetic of a traced training step and leaves the gradients unchanged', () => {
    const model = tf.sequential({ layers: [tf.layers.dense({ units: 4, inputShape: [3], activation: 'tanh' }), tf.layers.dense({ units: 2 })] });
    const x = tf.randomNormal([5, 3]);
    const y = tf.randomNormal([5, 2]);
    const { graph, variables } = traceTraining(model, 'meanSquaredError', [x, y]);
    const { graph: folded, count } = constantFolding.apply(graph, { backend: 'wasm', training: true });
    expect(count).toBeGreaterThan(0);
    expect(folded.nodes.length).toBe(graph.nodes.length - count);
    expectSameResults(graph, folded, { inputs: [x, y, tf.scalar(3)], params: paramsOf(variables) });
  });
});
