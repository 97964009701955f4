import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { applyPatterns, Patterns } from '../../../lib/ir/patterns/patterns.js';
import { traceTraining } from '../../../lib/trace/trace_model.js';
import { expectSameResults, onWasmBackend, paramsOf } from './graph_results.js';

onWasmBackend();

describe('Default patterns on the training step of an MLP 784-512-512-10 (batch 64) on wasm', () => {
  it('leave no transposed matmul and the same loss and gradients', () => {
    expect(tf.getBackend()).toBe('wasm');
    const model = tf.sequential({
      layers: [
        tf.layers.dense({ units: 512, inputShape: [784], activation: 'relu' }),
        tf.layers.dense({ units: 512, activation: 'relu' }),
        tf.layers.dense({ units: 10, activation: 'softmax' }),
      ],
    });
    const x = tf.randomNormal([64, 784]);
    const y = tf.oneHot(tf.randomUniform([64], 0, 10, 'int32'), 10).toFloat();
    const { graph, variables } = traceTraining(model, 'categoricalCrossentropy', [x, y]);
    const isTransposedMatMul = (n: { kernel: string; attrs: Record<string, unknown> }) =>
      (n.kernel === 'BatchMatMul' || n.kernel === '_FusedMatMul') && (n.attrs.transposeA === true || n.attrs.transposeB === true);
    const transposed = graph.nodes.filter(isTransposedMatMul).length;
    expect(transposed).toBe(5);

    const { graph: rewritten, fired } = applyPatterns(graph, new Patterns('Default'), { backend: tf.getBackend(), training: true });
    expect(rewritten.nodes.filter(isTransposedMatMul)).toHaveLength(0);
    expect(fired.get('TransposedMatMul')).toBe(transposed);
    expect(rewritten.nodes.length).toBeLessThan(graph.nodes.length);
    expectSameResults(graph, rewritten, { inputs: [x, y, tf.scalar(1)], params: paramsOf(variables) });
  });
});
