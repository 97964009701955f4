/**
 * The traced gradient of a batched gather (`tf.gather(x, indices, 1, 1)`, as
 * BERT picks its masked tokens) is one scatter-add for the whole batch, with
 * the numbers of tfjs's own gradient, which splits the batch and scatters
 * each sample apart.
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { ops } from 'poptfjs';
import { traceTraining } from '../../lib/trace/trace_model.js';
import { GraphInterpreter } from '../../lib/runtime/graph_interpreter.js';
import { RandomSource } from '../../lib/executable/random_source.js';

const ROWS = 6;
const WIDTH = 5;

/** `x · w`, shaped `[batch, ROWS, WIDTH]`, then the rows `indices` picks in each sample (`axis` 1 and one batch dimension), summed squared as the loss. */
function pickRows(w: tf.Variable, axis = 1) {
  return (x: tf.Tensor, indices: tf.Tensor) => {
    const h = tf.reshape(tf.matMul(tf.reshape(x, [-1, WIDTH]), w), [x.shape[0]!, ROWS, WIDTH]);
    const picked = axis === 1 ? tf.gather(h, indices, 1, 1) : tf.gather(tf.transpose(h, [0, 2, 1]), indices, 2, 1);
    return [picked, ops.identityLoss(tf.sum(tf.square(picked)), 'sum')];
  };
}

/** The traced step at `batch` samples picking `picks` rows each (with repeats), its gradient of `w`, and tfjs's own. */
function traced(batch: number, picks: number, axis = 1) {
  const w = tf.variable(tf.randomNormal([WIDTH, WIDTH], 0, 1, 'float32', 7), true, `gather_w_${batch}_${axis}`);
  const x = tf.randomNormal([batch, ROWS, WIDTH], 0, 1, 'float32', batch);
  const indices = tf.tensor2d(
    Array.from({ length: batch * picks }, (_, i) => (i * 5) % (axis === 1 ? ROWS : WIDTH)),
    [batch, picks],
    'int32',
  );
  const model = pickRows(w, axis);
  const { graph } = traceTraining(model, undefined, [x, indices]);
  const out = new GraphInterpreter(graph).run({ inputs: [x, indices, tf.scalar(1)], params: new Map([[w.name, w as tf.Tensor]]), random: new RandomSource(0) });
  const expected = tf.variableGrads(() => model(x, indices)[1] as tf.Scalar, [w]).grads[w.name]!;
  return { graph, gradient: out.get(graph.roles.gradients![w.name]!)!, expected };
}

describe('the gradient of a batched gather', () => {
  it('gives the numbers of tfjs own gradient, repeated picks summed', () => {
    const { gradient, expected } = traced(4, 3);
    expect(Array.from(gradient.dataSync())).toEqual(Array.from(expected.dataSync()));
  });

  it('is one UnsortedSegmentSum whatever the batch, so the graph does not grow with it', () => {
    const small = traced(2, 3).graph;
    const large = traced(9, 3).graph;
    const scatters = (g: typeof small) => g.nodes.filter((n) => n.kernel === 'UnsortedSegmentSum').length;
    expect(scatters(small)).toBe(1);
    expect(scatters(large)).toBe(1);
    expect(large.nodes.length).toBe(small.nodes.length);
  });

  it('keeps tfjs own gradient along another axis, with its numbers', () => {
    const { graph, gradient, expected } = traced(3, 2, 2);
    expect(graph.nodes.filter((n) => n.kernel === 'UnsortedSegmentSum').length).toBe(3);
    expect(Array.from(gradient.dataSync())).toEqual(Array.from(expected.dataSync()));
  });
});
