import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import type { Graph } from '../../../lib/ir/graph.js';
import { transposedMatMul } from '../../../lib/ir/patterns/transposed_matmul.js';
import { traceInference, traceTraining } from '../../../lib/trace/trace_model.js';
import { expectSameResults, nodesOf, onWasmBackend, paramsOf } from './graph_results.js';

onWasmBackend();

const WASM = { backend: 'wasm', training: false };

function transposedMatMuls(graph: Graph) {
  return graph.nodes.filter((n) => (n.kernel === 'BatchMatMul' || n.kernel === '_FusedMatMul') && (n.attrs.transposeA || n.attrs.transposeB));
}

describe('TransposedMatMul', () => {
  for (const [transposeA, transposeB] of [
    [true, false],
    [false, true],
    [true, true],
  ] as const) {
    it(`makes the transposes of matMul(a, b, ${transposeA}, ${transposeB}) explicit and gives the same product`, () => {
      const a = tf.randomNormal(transposeA ? [5, 3] : [3, 5]);
      const b = tf.randomNormal(transposeB ? [4, 5] : [5, 4]);
      const { graph } = traceInference((x: tf.Tensor, y: tf.Tensor) => tf.matMul(x, y, transposeA, transposeB), [a, b]);
      const { graph: rewritten, count } = transposedMatMul.apply(graph, WASM);
      expect(count).toBe(1);
      expect(transposedMatMuls(rewritten)).toHaveLength(0);
      const transposes = nodesOf(rewritten, 'Transpose');
      expect(transposes).toHaveLength(Number(transposeA) + Number(transposeB));
      for (const t of transposes) expect(t.attrs.perm).toEqual([1, 0]);
      expectSameResults(graph, rewritten, { inputs: [a, b], params: new Map() });
    });
  }

  it('keeps a transposed _FusedMatMul fused, with its bias and activation', () => {
    const a = tf.randomNormal([2, 3, 5]);
    const b = tf.randomNormal([2, 4, 5]);
    const bias = tf.randomNormal([4]);
    const fn = (x: tf.Tensor, y: tf.Tensor) => tf.fused.matMul({ a: x, b: y, transposeB: true, bias, activation: 'relu' });
    const { graph } = traceInference(fn, [a, b]);
    const { graph: rewritten, count } = transposedMatMul.apply(graph, WASM);
    expect(count).toBe(1);
    const fused = nodesOf(rewritten, '_FusedMatMul');
    expect(fused).toHaveLength(1);
    expect(fused[0]!.attrs).toMatchObject({ transposeA: false, transposeB: false, activation: 'relu' });
    expect(fused[0]!.inputNames).toEqual(['a', 'b', 'bias']);
    expect(nodesOf(rewritten, 'Transpose')[0]!.attrs.perm).toEqual([0, 2, 1]);
    expectSameResults(graph, rewritten, { inputs: [a, b], params: new Map() });
  });

  it('stays off where transposed matmuls are not slower (cpu, tensorflow)', () => {
    const a = tf.randomNormal([5, 3]);
    const { graph } = traceInference((x: tf.Tensor) => tf.matMul(x, x, true, false), [a]);
    for (const backend of ['cpu', 'tensorflow']) {
      const result = transposedMatMul.apply(graph, { backend, training: true });
      expect(result.count).toBe(0);
      expect(result.graph).toBe(graph);
    }
  });

  it('rewrites the backward matmuls of a Dense layer and leaves the gradients unchanged', () => {
    const model = tf.sequential({ layers: [tf.layers.dense({ units: 6, inputShape: [8], activation: 'relu' }), tf.layers.dense({ units: 3 })] });
    const x = tf.randomNormal([4, 8]);
    const y = tf.randomNormal([4, 3]);
    const { graph, variables } = traceTraining(model, 'meanSquaredError', [x, y]);
    expect(transposedMatMuls(graph).length).toBeGreaterThan(0);
    const { graph: rewritten, count } = transposedMatMul.apply(graph, { backend: 'wasm', training: true });
    expect(count).toBe(transposedMatMuls(graph).length);
    expect(transposedMatMuls(rewritten)).toHaveLength(0);
    expectSameResults(graph, rewritten, { inputs: [x, y, tf.scalar(1)], params: paramsOf(variables) });
  });
});
