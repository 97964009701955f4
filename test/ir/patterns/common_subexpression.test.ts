import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { GraphBuilder } from '../../../lib/ir/graph_builder.js';
import { commonSubexpression } from '../../../lib/ir/patterns/common_subexpression.js';
import { traceInference, traceTraining } from '../../../lib/trace/trace_model.js';
import { expectSameResults, nodesOf, onWasmBackend, paramsOf } from './graph_results.js';

onWasmBackend();

const CONTEXT = { backend: 'wasm', training: false };

describe('CommonSubexpression', () => {
  it('merges repeated computations, including those that become equal after a merge', () => {
    const fn = (x: tf.Tensor) => tf.add(tf.sqrt(tf.exp(x)), tf.sqrt(tf.exp(x)));
    const x = tf.tensor1d([0.5, 1, 2]);
    const { graph } = traceInference(fn, [x]);
    expect(nodesOf(graph, 'Exp')).toHaveLength(2);
    const { graph: merged, count } = commonSubexpression.apply(graph, CONTEXT);
    expect(count).toBe(2);
    expect(merged.nodes.map((n) => n.kernel)).toEqual(['Exp', 'Sqrt', 'Add']);
    const [sqrt, add] = [merged.nodes[1]!, merged.nodes[2]!];
    expect(add.inputs).toEqual([sqrt.outputs[0], sqrt.outputs[0]]);
    expectSameResults(graph, merged, { inputs: [x], params: new Map() });
  });

  it('keeps computations with different attributes apart', () => {
    const fn = (x: tf.Tensor) => tf.add(tf.sum(x, 0), tf.sum(x, 1));
    const x = tf.ones([3, 3]);
    const { graph } = traceInference(fn, [x]);
    expect(commonSubexpression.apply(graph, CONTEXT).count).toBe(0);
  });

  it('never merges two random draws', () => {
    const fn = (x: tf.Tensor) => tf.add(x, tf.sub(tf.randomUniform([100]), tf.randomUniform([100])));
    const { graph } = traceInference(fn, [tf.zeros([100])]);
    const draws = nodesOf(graph, 'poptfjs.RandomUniform');
    expect(draws).toHaveLength(2);
    expect(draws[0]!.attrs).toEqual(draws[1]!.attrs);
    expect(commonSubexpression.apply(graph, CONTEXT).count).toBe(0);
  });

  it('keeps computations of different blocks apart', () => {
    const b = new GraphBuilder();
    const x = b.addInput('x', [2], 'float32');
    const [y1] = b.addNode('Exp', ['x'], [x], {}, [{ shape: [2], dtype: 'float32' }], { pass: 'forward', block: 'first' });
    const [y2] = b.addNode('Exp', ['x'], [x], {}, [{ shape: [2], dtype: 'float32' }], { pass: 'forward', block: 'second' });
    const graph = b.build({ outputs: [y1!, y2!] });
    expect(commonSubexpression.apply(graph, CONTEXT).count).toBe(0);
  });

  it('merges the repeated casts of a traced training step and leaves the gradients unchanged', () => {
    const model = tf.sequential({ layers: [tf.layers.dense({ units: 4, inputShape: [3], activation: 'relu' }), tf.layers.dense({ units: 2 })] });
    const x = tf.randomNormal([5, 3]);
    const y = tf.randomNormal([5, 2]);
    const { graph, variables } = traceTraining(model, 'meanSquaredError', [x, y]);
    const { graph: merged, count } = commonSubexpression.apply(graph, { backend: 'wasm', training: true });
    expect(count).toBeGreaterThan(0);
    expect(merged.nodes).toHaveLength(graph.nodes.length - count);
    expectSameResults(graph, merged, { inputs: [x, y, tf.scalar(1)], params: paramsOf(variables) });
  });
});
