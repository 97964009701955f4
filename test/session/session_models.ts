/**
 * Small models built with the PopART Builder for the session tests, with
 * their weights, so the tests can compute the expected numbers with tfjs.
 */
import * as tf from '@tensorflow/tfjs';
import { popart } from 'poptfjs';

/** `out = x · W + b` with the intermediate `h = x · W`: x [batch, 3], W [3, 2], b [2]. */
export interface LinearModel {
  readonly builder: popart.Builder;
  readonly x: string;
  readonly h: string;
  readonly out: string;
  readonly w: string;
  readonly b: string;
  readonly W: Float32Array;
  readonly B: Float32Array;
}

/** W and b of the linear models. */
export const LINEAR_W = Float32Array.from([0.1, -0.2, 0.3, 0.4, -0.5, 0.6]);
/** b of the linear models. */
export const LINEAR_B = Float32Array.from([0.05, -0.1]);

/** A linear layer on inputs of `batch` rows of 3 features. */
export function linearModel(batch = 2): LinearModel {
  const builder = new popart.Builder();
  const x = builder.addInputTensor('FLOAT', [batch, 3], 'x');
  const w = builder.addInitializedInputTensor({ data: LINEAR_W, shape: [3, 2] }, 'W');
  const b = builder.addInitializedInputTensor({ data: LINEAR_B, shape: [2] }, 'b');
  const h = builder.aiOnnx.matmul([x, w], {}, 'h');
  const out = builder.aiOnnx.add([h, b], {}, 'out');
  builder.addOutputTensor(out);
  return { builder, x, h, out, w, b, W: LINEAR_W, B: LINEAR_B };
}

/** The linear model with a softmax and an NLL loss on int32 labels. */
export function linearClassifier(batch = 2): LinearModel & { labels: string; loss: string; probs: string } {
  const model = linearModel(batch);
  const labels = model.builder.addInputTensor('INT32', [batch], 'labels');
  const probs = model.builder.aiOnnx.softmax([model.out], { axis: 1 }, 'probs');
  const loss = model.builder.aiGraphcore.nllloss([probs, labels], { debugContext: 'loss' });
  return { ...model, labels, loss, probs };
}

/** Numbers `start, start + step, ...` as a Float32Array. */
export function ramp(length: number, step = 0.1, start = -1): Float32Array {
  return Float32Array.from({ length }, (_, i) => start + i * step);
}

/** The mean NLL loss of the linear classifier with weights `w`, `b` on `x` [n, 3] and `labels` [n]. */
export function classifierLoss(w: tf.Tensor, b: tf.Tensor, x: tf.Tensor, labels: tf.Tensor): tf.Scalar {
  const probs = tf.softmax(tf.add(tf.matMul(x, w), b));
  const picked = tf.sum(tf.mul(probs, tf.oneHot(labels as tf.Tensor1D, 2)), 1);
  return tf.neg(tf.mean(tf.log(picked))) as tf.Scalar;
}

/** The loss of the linear classifier and its gradients with respect to `w` and `b`. */
export function classifierGradients(w: tf.Tensor, b: tf.Tensor, x: tf.Tensor, labels: tf.Tensor): { loss: number; gw: tf.Tensor; gb: tf.Tensor } {
  const { value, grads } = tf.valueAndGrads((wv: tf.Tensor, bv: tf.Tensor) => classifierLoss(wv, bv, x, labels))([w, b]);
  return { loss: value.dataSync()[0]!, gw: grads[0]!, gb: grads[1]! };
}

/** Asserts every element of `actual` is within `tolerance` of `expected`. */
export function expectAllClose(actual: ArrayLike<number>, expected: ArrayLike<number>, tolerance = 1e-5): void {
  if (actual.length !== expected.length) throw new Error(`${actual.length} values, expected ${expected.length}`);
  for (let i = 0; i < actual.length; i++) {
    if (!(Math.abs(actual[i]! - expected[i]!) <= tolerance * (1 + Math.abs(expected[i]!)))) {
      throw new Error(`element ${i}: ${actual[i]} vs expected ${expected[i]}`);
    }
  }
}
