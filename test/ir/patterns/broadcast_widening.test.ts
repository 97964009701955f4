import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { broadcastWidening } from '../../../lib/ir/patterns/broadcast_widening.js';
import { traceInference, traceTraining } from '../../../lib/trace/trace_model.js';
import { expectSameResults, nodesOf, onWasmBackend, paramsOf } from './graph_results.js';
import { smallCnn } from '../../helpers.js';

onWasmBackend();

const WASM = { backend: 'wasm', training: false };

describe('BroadcastWidening', () => {
  const widened: Array<[string, number[], number[], (x: tf.Tensor, v: tf.Tensor) => tf.Tensor, number[]]> = [
    ['a bias added to a convolution output', [64, 28, 28, 16], [16], (x, v) => tf.add(x, v), [1792, 448]],
    ['a vector on the left of an Add', [8, 32, 32, 8], [8], (x, v) => tf.add(v, x), [256, 256]],
    ['a per-channel scale of shape [1, 1, 1, C]', [8, 16, 16, 32], [1, 1, 1, 32], (x, v) => tf.mul(x, v), [128, 512]],
    ['a Sub with the vector second', [16, 32, 32, 3], [3], (x, v) => tf.sub(x, v), [512, 96]],
    ['a Sub with the vector first', [16, 32, 32, 3], [3], (x, v) => tf.sub(v, x), [512, 96]],
    ['a division by a vector', [4, 64, 64, 16], [16], (x, v) => tf.div(x, v), [256, 1024]],
  ];
  for (const [what, xShape, vShape, fn, rows] of widened) {
    it(`widens ${what} to rows of the tensor, with the same result`, () => {
      const x = tf.randomNormal(xShape);
      const v = tf.add(tf.randomUniform(vShape), 0.5);
      const { graph } = traceInference(fn, [x, v]);
      const { graph: after, count } = broadcastWidening.apply(graph, WASM);
      expect(count).toBe(1);
      const [tile] = nodesOf(after, 'Tile');
      expect(tile!.attrs.reps).toEqual([xShape[xShape.length - 2]]);
      const binary = after.nodes.find((n) => ['Add', 'Sub', 'Multiply', 'RealDiv'].includes(n.kernel))!;
      expect(after.values[binary.outputs[0]!]!.shape).toEqual(rows);
      expect(broadcastWidening.apply(after, WASM).count).toBe(0);
      expectSameResults(graph, after, { inputs: [x, v], params: new Map() }, 0);
      tf.dispose([x, v]);
    });
  }

  const kept: Array<[string, number[], number[], (x: tf.Tensor, v: tf.Tensor) => tf.Tensor]> = [
    ['a small tensor', [4, 8, 8, 16], [16], (x, v) => tf.add(x, v)],
    ['a wide last axis', [64, 14, 14, 64], [64], (x, v) => tf.add(x, v)],
    ['rows that would be too wide', [64, 2, 8192, 2], [2], (x, v) => tf.add(x, v)],
    ['a broadcast along another axis', [64, 28, 28, 16], [28, 1], (x, v) => tf.add(x, v)],
    ['two full tensors', [64, 28, 28, 16], [64, 28, 28, 16], (x, v) => tf.add(x, v)],
    ['another kernel', [64, 28, 28, 16], [16], (x, v) => tf.maximum(x, v)],
  ];
  for (const [what, xShape, vShape, fn] of kept) {
    it(`leaves ${what} alone`, () => {
      const x = tf.ones(xShape);
      const v = tf.ones(vShape);
      const { graph } = traceInference(fn, [x, v]);
      const result = broadcastWidening.apply(graph, WASM);
      expect(result.count).toBe(0);
      expect(result.graph).toBe(graph);
      tf.dispose([x, v]);
    });
  }

  it('stays off on backends whose broadcasts are not slow (cpu, tensorflow)', () => {
    const { graph } = traceInference((x: tf.Tensor, v: tf.Tensor) => tf.add(x, v), [tf.ones([64, 28, 28, 16]), tf.ones([16])]);
    for (const backend of ['cpu', 'tensorflow']) {
      const result = broadcastWidening.apply(graph, { backend, training: true });
      expect(result.count).toBe(0);
      expect(result.graph).toBe(graph);
    }
  });

  it('widens the bias adds of a CNN and leaves the loss and gradients unchanged', () => {
    const model = smallCnn('randomNormal');
    const x = tf.randomNormal([64, 28, 28, 1]);
    const y = tf.oneHot(tf.randomUniform([64], 0, 10, 'int32'), 10).toFloat();
    const { graph, variables } = traceTraining(model, 'categoricalCrossentropy', [x, y]);
    const { graph: after, count } = broadcastWidening.apply(graph, { backend: 'wasm', training: true });
    expect(count).toBe(2);
    expectSameResults(graph, after, { inputs: [x, y, tf.scalar(1)], params: paramsOf(variables) });
    model.dispose();
  });
});
