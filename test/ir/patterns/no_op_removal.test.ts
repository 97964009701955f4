import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { noOpRemoval } from '../../../lib/ir/patterns/no_op_removal.js';
import { traceInference, traceTraining } from '../../../lib/trace/trace_model.js';
import { expectSameResults, nodesOf, onWasmBackend, paramsOf } from './graph_results.js';

onWasmBackend();

const CONTEXT = { backend: 'wasm', training: false };

describe('NoOpRemoval', () => {
  it('removes Identity, same-dtype Cast and same-shape Reshape', () => {
    const fn = (x: tf.Tensor) => tf.exp(tf.reshape(tf.cast(tf.clone(tf.neg(x)), 'float32'), [2, 3]));
    const x = tf.randomNormal([2, 3]);
    const { graph } = traceInference(fn, [x]);
    const { graph: cleaned, count } = noOpRemoval.apply(graph, CONTEXT);
    expect(count).toBe(3);
    expect(cleaned.nodes.map((n) => n.kernel)).toEqual(['Neg', 'Exp']);
    expectSameResults(graph, cleaned, { inputs: [x], params: new Map() });
  });

  it('keeps a Cast that changes the dtype', () => {
    const { graph } = traceInference((x: tf.Tensor) => tf.cast(x, 'int32'), [tf.ones([2])]);
    expect(noOpRemoval.apply(graph, CONTEXT).count).toBe(0);
  });

  it('collapses a chain of Reshapes into one Reshape of the source', () => {
    const fn = (x: tf.Tensor) => tf.exp(tf.reshape(tf.reshape(tf.reshape(x, [3, 4]), [2, 2, 3]), [4, 3]));
    const x = tf.randomNormal([2, 6]);
    const { graph } = traceInference(fn, [x]);
    const { graph: cleaned } = noOpRemoval.apply(graph, CONTEXT);
    const live = nodesOf(cleaned, 'Reshape').filter((n) => cleaned.nodes.some((m) => m.inputs.includes(n.outputs[0]!)));
    expect(live).toHaveLength(1);
    expect(live[0]!.inputs).toEqual([cleaned.inputs[0]]);
    expect(live[0]!.attrs.shape).toEqual([4, 3]);
    expectSameResults(graph, cleaned, { inputs: [x], params: new Map() });
  });

  it('removes Transposes that cancel and merges the others into one', () => {
    const x = tf.randomNormal([2, 3, 4]);
    const cancel = traceInference((t: tf.Tensor) => tf.exp(tf.transpose(tf.transpose(t, [1, 2, 0]), [2, 0, 1])), [x]).graph;
    const cancelled = noOpRemoval.apply(cancel, CONTEXT).graph;
    expect(cancelled.nodes.filter((n) => n.kernel === 'Transpose' && cancelled.nodes.some((m) => m.inputs.includes(n.outputs[0]!)))).toHaveLength(0);
    expectSameResults(cancel, cancelled, { inputs: [x], params: new Map() });

    const compose = traceInference((t: tf.Tensor) => tf.exp(tf.transpose(tf.transpose(t, [1, 2, 0]), [1, 2, 0])), [x]).graph;
    const composed = noOpRemoval.apply(compose, CONTEXT).graph;
    const exp = nodesOf(composed, 'Exp')[0]!;
    const producer = composed.nodes.find((n) => n.outputs.includes(exp.inputs[0]!))!;
    expect(producer.kernel).toBe('Transpose');
    expect(producer.attrs.perm).toEqual([2, 0, 1]);
    expect(producer.inputs).toEqual([composed.inputs[0]]);
    expectSameResults(compose, composed, { inputs: [x], params: new Map() });
  });

  it('makes a Transpose that moves only size-1 axes a Reshape, merged with the Reshape after it, and keeps one that reorders longer axes', () => {
    const x = tf.randomNormal([1, 1, 1, 6]);
    const { graph } = traceInference((t: tf.Tensor) => tf.exp(tf.reshape(tf.transpose(t, [0, 3, 1, 2]), [1, 6])), [x]);
    const { graph: cleaned } = noOpRemoval.apply(graph, CONTEXT);
    const exp = nodesOf(cleaned, 'Exp')[0]!;
    const producer = cleaned.nodes.find((n) => n.outputs.includes(exp.inputs[0]!))!;
    expect(producer.kernel).toBe('Reshape');
    expect(producer.inputs).toEqual([cleaned.inputs[0]]);
    expect(producer.attrs.shape).toEqual([1, 6]);
    expectSameResults(graph, cleaned, { inputs: [x], params: new Map() });

    const y = tf.randomNormal([2, 1, 3]);
    const swap = traceInference((t: tf.Tensor) => tf.exp(tf.transpose(t, [2, 1, 0])), [y]).graph;
    expect(noOpRemoval.apply(swap, CONTEXT).count).toBe(0);
  });

  it('moves a graph output that was a no-op onto the surviving value, here the input', () => {
    const x = tf.tensor1d([1, 2, 3]);
    const { graph } = traceInference((t: tf.Tensor) => tf.clone(tf.reshape(t, [3])), [x]);
    const { graph: cleaned, count } = noOpRemoval.apply(graph, CONTEXT);
    expect(count).toBe(2);
    expect(cleaned.nodes).toHaveLength(0);
    expect(cleaned.roles.outputs).toEqual(cleaned.inputs);
    expectSameResults(graph, cleaned, { inputs: [x], params: new Map() });
  });

  it('rewires the gradients of a traced training step to the values that survive', () => {
    const model = tf.sequential({ layers: [tf.layers.dense({ units: 4, inputShape: [3], activation: 'relu' }), tf.layers.dense({ units: 2 })] });
    const x = tf.randomNormal([5, 3]);
    const y = tf.randomNormal([5, 2]);
    const { graph, variables } = traceTraining(model, 'meanSquaredError', [x, y]);
    const { graph: cleaned, count } = noOpRemoval.apply(graph, { backend: 'wasm', training: true });
    expect(count).toBeGreaterThan(0);
    const producers = Object.values(cleaned.roles.gradients!).map((id) => {
      const source = cleaned.values[id]!.source;
      return source.kind === 'node' ? cleaned.nodes[source.node]!.kernel : source.kind;
    });
    // Bias gradients were same-shape Reshapes of a Sum; they now name the Sum.
    expect(producers.filter((k) => k === 'Sum')).toHaveLength(2);
    expectSameResults(graph, cleaned, { inputs: [x, y, tf.scalar(1)], params: paramsOf(variables) });
  });
});
