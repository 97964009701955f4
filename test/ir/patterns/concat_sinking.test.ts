import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { concatSinking } from '../../../lib/ir/patterns/concat_sinking.js';
import { applyPatterns, Patterns } from '../../../lib/ir/patterns/patterns.js';
import { traceInference, traceTraining } from '../../../lib/trace/trace_model.js';
import { expectSameResults, nodesOf, onWasmBackend } from './graph_results.js';

onWasmBackend();

const CONTEXT = { backend: 'wasm', training: false };

describe('ConcatSinking', () => {
  it('pools each input of a channel concatenation and joins the pooled tensors, for MaxPool and AvgPool', () => {
    const a = tf.randomNormal([1, 9, 9, 3]);
    const b = tf.randomNormal([1, 9, 9, 5]);
    const fn = (x: tf.Tensor, y: tf.Tensor) => [
      tf.maxPool(tf.concat([tf.relu(x), tf.relu(y)], 3) as tf.Tensor4D, 3, 2, 'valid'),
      tf.avgPool(tf.concat([tf.exp(x), y, x], -1) as tf.Tensor4D, 2, 2, 'same'),
    ];
    const { graph } = traceInference(fn, [a, b]);
    const { graph: rewritten, count } = concatSinking.apply(graph, CONTEXT);
    expect(count).toBe(2);
    expectSameResults(graph, rewritten, { inputs: [a, b], params: new Map() });
    const patterns = new Patterns('NoPatterns');
    for (const name of ['ConcatSinking', 'DeadCodeElimination']) patterns.enablePattern(name, true);
    const cleaned = applyPatterns(graph, patterns, CONTEXT).graph;
    expect(nodesOf(cleaned, 'MaxPool').map((n) => cleaned.values[n.inputs[0]!]!.shape)).toEqual([
      [1, 9, 9, 3],
      [1, 9, 9, 5],
    ]);
    expect(nodesOf(cleaned, 'AvgPool')).toHaveLength(3);
    expect(nodesOf(cleaned, 'Concat').map((n) => cleaned.values[n.outputs[0]!]!.shape)).toEqual([
      [1, 4, 4, 8],
      [1, 5, 5, 11],
    ]);
    expectSameResults(graph, cleaned, { inputs: [a, b], params: new Map() });
  });

  it('leaves alone a concatenation along another axis, one read elsewhere too, and training graphs', () => {
    const a = tf.randomNormal([1, 4, 4, 2]);
    const kept = traceInference(
      (x: tf.Tensor) => {
        const joined = tf.concat([x, x], 3) as tf.Tensor4D;
        return [tf.maxPool(tf.concat([x, x], 2) as tf.Tensor4D, 2, 2, 'valid'), tf.maxPool(joined, 2, 2, 'valid'), joined];
      },
      [a],
    ).graph;
    expect(concatSinking.apply(kept, CONTEXT).count).toBe(0);
    const input = tf.input({ shape: [4, 4, 2] });
    const joined = tf.layers.concatenate().apply([input, input]) as tf.SymbolicTensor;
    const pooled = tf.layers.maxPooling2d({ poolSize: 2 }).apply(joined) as tf.SymbolicTensor;
    const output = tf.layers.dense({ units: 1 }).apply(tf.layers.flatten().apply(pooled)) as tf.SymbolicTensor;
    const model = tf.model({ inputs: input, outputs: output });
    const training = traceTraining(model, 'meanSquaredError', [a, tf.randomNormal([1, 1])]).graph;
    expect(concatSinking.apply(training, { backend: 'wasm', training: true }).count).toBe(0);
    expect(concatSinking.apply(training, CONTEXT).count).toBe(1);
  });
});
