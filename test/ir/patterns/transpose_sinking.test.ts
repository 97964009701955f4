import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { applyPatterns, Patterns } from '../../../lib/ir/patterns/patterns.js';
import { transposeSinking } from '../../../lib/ir/patterns/transpose_sinking.js';
import { traceInference, traceTraining } from '../../../lib/trace/trace_model.js';
import { expectSameResults, nodesOf, onWasmBackend } from './graph_results.js';

onWasmBackend();

const CONTEXT = { backend: 'wasm', training: false };
const TO_FIRST = [0, 3, 1, 2];
const TO_LAST = [0, 2, 3, 1];

/** The Transposes of `graph` that some node reads or that the graph hands back. */
function liveTransposes(graph: ReturnType<typeof traceInference>['graph']) {
  return nodesOf(graph, 'Transpose').filter((n) => graph.nodes.some((m) => m.inputs.includes(n.outputs[0]!)) || graph.roles.outputs.includes(n.outputs[0]!));
}

describe('TransposeSinking', () => {
  it('moves a transpose past unary kernels, scalar operands, a residual add, a concatenation and a padding, where it meets its inverse', () => {
    const a = tf.randomNormal([1, 4, 5, 3]);
    const b = tf.randomNormal([1, 4, 5, 3]);
    const fn = (x: tf.Tensor, y: tf.Tensor) => {
      const xs = tf.minimum(tf.relu(tf.transpose(x, TO_FIRST)), 6);
      const ys = tf.mul(2, tf.transpose(y, TO_FIRST));
      const joined = tf.concat([tf.add(xs, ys), tf.sigmoid(tf.transpose(y, TO_FIRST))], 1);
      const padded = tf.pad(
        joined,
        [
          [0, 0],
          [0, 0],
          [1, 2],
          [0, 1],
        ],
        -1,
      );
      return tf.exp(tf.transpose(padded, TO_LAST));
    };
    const { graph } = traceInference(fn, [a, b]);
    expect(liveTransposes(graph)).toHaveLength(4);
    const { graph: rewritten, count } = transposeSinking.apply(graph, CONTEXT);
    // Relu, Minimum, Multiply, Add, Sigmoid, Concat, PadV2, and the Exp after the last transpose.
    expect(count).toBe(8);
    expectSameResults(graph, rewritten, { inputs: [a, b], params: new Map() });
    const patterns = new Patterns('NoPatterns');
    for (const name of ['TransposeSinking', 'NoOpRemoval', 'DeadCodeElimination']) patterns.enablePattern(name, true);
    const cleaned = applyPatterns(graph, patterns, CONTEXT).graph;
    expect(liveTransposes(cleaned)).toHaveLength(0);
    expect(nodesOf(cleaned, 'Concat')[0]!.attrs.axis).toBe(3);
    expect(nodesOf(cleaned, 'PadV2')[0]!.attrs.paddings).toEqual([
      [0, 0],
      [1, 2],
      [0, 1],
      [0, 0],
    ]);
    expectSameResults(graph, cleaned, { inputs: [a, b], params: new Map() });
  });

  it('moves a transpose past reductions, with their axes permuted, keeping their dims or not', () => {
    const x = tf.randomNormal([2, 5, 6, 3]);
    const reductions: Array<[string, (t: tf.Tensor) => tf.Tensor, number[], number[]]> = [
      ['Mean', (t) => tf.mean(t, [2, 3], true), [1, 2], TO_FIRST],
      ['Sum', (t) => tf.sum(t, [1, 3]), [3, 2], [0, 1]],
      ['Min', (t) => tf.min(t, -1), [2], [0, 2, 1]],
      ['Prod', (t) => tf.prod(t, 0, true), [0], TO_FIRST],
    ];
    for (const [kernel, reduce, axisBefore, permAfter] of reductions) {
      const { graph } = traceInference((t: tf.Tensor) => reduce(tf.transpose(t, TO_FIRST)), [x]);
      const { graph: rewritten, count } = transposeSinking.apply(graph, CONTEXT);
      expect(count, kernel).toBe(1);
      const [reduction] = nodesOf(rewritten, kernel);
      expect(rewritten.inputs).toContain(reduction!.inputs[0]);
      expect(reduction!.attrs.axis).toEqual(axisBefore);
      expect(liveTransposes(rewritten).map((n) => n.attrs.perm)).toEqual([permAfter]);
      expectSameResults(graph, rewritten, { inputs: [x], params: new Map() });
    }
  });

  it('keeps a transpose that another kernel or the graph also reads, and leaves training graphs alone', () => {
    const x = tf.randomNormal([1, 2, 2, 3]);
    const shared = traceInference(
      (t: tf.Tensor) => {
        const first = tf.transpose(t, TO_FIRST);
        return [tf.relu(first), first];
      },
      [x],
    ).graph;
    expect(transposeSinking.apply(shared, CONTEXT).count).toBe(0);
    const model = tf.sequential({ layers: [tf.layers.dense({ units: 2, inputShape: [3], activation: 'relu' })] });
    const training = traceTraining(model, 'meanSquaredError', [tf.randomNormal([4, 3]), tf.randomNormal([4, 2])]).graph;
    expect(transposeSinking.apply(training, { backend: 'wasm', training: true }).count).toBe(0);
  });
});
