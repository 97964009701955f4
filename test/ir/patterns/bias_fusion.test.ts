import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { biasFusion } from '../../../lib/ir/patterns/bias_fusion.js';
import { applyPatterns, Patterns } from '../../../lib/ir/patterns/patterns.js';
import { traceInference, traceTraining } from '../../../lib/trace/trace_model.js';
import { expectSameResults, nodesOf, onWasmBackend } from './graph_results.js';

onWasmBackend();

const CONTEXT = { backend: 'wasm', training: false };

/** The fusing patterns alone, then dead-code elimination. */
function fused(graph: ReturnType<typeof traceInference>['graph']) {
  const patterns = new Patterns('NoPatterns');
  for (const name of ['BiasFusion', 'ActivationFusion', 'DeadCodeElimination']) patterns.enablePattern(name, true);
  return applyPatterns(graph, patterns, CONTEXT).graph;
}

describe('BiasFusion', () => {
  it('makes the bias Add of a 2-D product, read directly or through a Reshape, the bias of a _FusedMatMul, and a Relu after it its activation', () => {
    const x = tf.randomNormal([1, 64, 48]);
    const w1 = tf.randomNormal([48, 40]);
    const b1 = tf.randomNormal([40]);
    const w2 = tf.randomNormal([40, 24]);
    const b2 = tf.randomNormal([1, 24]);
    const fn = (input: tf.Tensor) => {
      const hidden = tf.relu(tf.add(b1, tf.reshape(tf.matMul(tf.reshape(input, [64, 48]), w1), [1, 64, 40])));
      return tf.add(tf.matMul(tf.reshape(hidden, [64, 40]), w2), b2);
    };
    const { graph } = traceInference(fn, [x]);
    const { graph: rewritten, count } = biasFusion.apply(graph, CONTEXT);
    expect(count).toBe(2);
    expectSameResults(graph, rewritten, { inputs: [x], params: new Map() });
    const cleaned = fused(graph);
    expect(nodesOf(cleaned, '_FusedMatMul').map((n) => [n.attrs.activation, cleaned.values[n.inputs[2]!]!.shape])).toEqual([
      ['relu', [40]],
      ['linear', [24]],
    ]);
    for (const kernel of ['BatchMatMul', 'Add', 'Relu']) expect(nodesOf(cleaned, kernel)).toHaveLength(0);
    expectSameResults(graph, cleaned, { inputs: [x], params: new Map() });
  });

  it('leaves alone a sum that is not a per-column weight, a product read elsewhere, a batched product, and training graphs', () => {
    const x = tf.randomNormal([8, 16]);
    const w = tf.randomNormal([16, 12]);
    const full = tf.randomNormal([8, 12]);
    const b = tf.randomNormal([12]);
    const kept = traceInference(
      (input: tf.Tensor, other: tf.Tensor) => {
        const product = tf.matMul(input, w);
        return [
          tf.add(tf.matMul(input, w), full),
          tf.add(tf.matMul(input, w), other),
          tf.add(product, b),
          product,
          tf.add(tf.matMul(tf.reshape(input, [2, 4, 16]), tf.reshape(tf.tile(w, [2, 1]), [2, 16, 12])), b),
        ];
      },
      [x, tf.randomNormal([12])],
    ).graph;
    expect(biasFusion.apply(kept, CONTEXT).count).toBe(0);
    const model = tf.sequential({ layers: [tf.layers.dense({ units: 2, inputShape: [3] })] });
    const training = traceTraining(model, 'meanSquaredError', [tf.randomNormal([4, 3]), tf.randomNormal([4, 2])]).graph;
    expect(biasFusion.apply(training, { backend: 'wasm', training: true }).count).toBe(0);
  });
});
