/**
 * Loss operators: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss, with
 * class weights, `ignore_index` and the reductions none, sum and mean (a
 * weighted mean over the targets that are not ignored).
 */
import * as tf from '@tensorflow/tfjs';
import { oneHotMask } from './one_hot_mask.js';
import type { OperatorCall, OperatorFamily, OperatorImplementation } from './operator.js';

/** [N, C, d...] → [N, d..., C]. */
function classesLast(x: tf.Tensor): tf.Tensor {
  if (x.rank === 2) return x;
  return tf.transpose(x, [0, ...Array.from({ length: x.rank - 2 }, (_, i) => i + 2), 1]);
}

/** The loss of log-probabilities `logProb` [N, C, d...] for integer `target` [N, d...]. */
function negativeLogLikelihood(call: OperatorCall, logProb: tf.Tensor, target: tf.Tensor, weight: tf.Tensor | undefined): tf.Tensor {
  const classes = logProb.shape[1]!;
  const labels = target.dtype === 'int32' ? target : tf.cast(target, 'int32');
  const ignored = call.attrs.has('ignore_index') ? tf.equal(labels, call.attrs.int('ignore_index')) : undefined;
  const safe = ignored ? tf.where(ignored, tf.zerosLike(labels), labels) : labels;
  const picked = tf.sum(tf.where(oneHotMask(safe, classes), classesLast(logProb), 0), -1);
  let weights: tf.Tensor | undefined = weight ? tf.gather(weight, safe) : undefined;
  if (ignored) {
    const kept = tf.cast(tf.logicalNot(ignored), 'float32');
    weights = weights ? tf.mul(weights, kept) : kept;
  }
  const loss = tf.neg(weights ? tf.mul(picked, weights) : picked);
  const reduction = call.attrs.string('reduction', 'mean');
  if (reduction === 'none') return loss;
  if (reduction === 'sum') return tf.sum(loss);
  return weights ? tf.div(tf.sum(loss), tf.sum(weights)) : tf.mean(loss);
}

const nllLoss: OperatorImplementation = (call) => [negativeLogLikelihood(call, call.input(0), call.input(1), call.optionalInput(2))];

const softmaxCrossEntropy: OperatorImplementation = (call) => {
  const scores = call.input(0);
  // Along the classes of [N, C, rest]: the wasm backend's reductions go wrong on tensors of rank 7.
  const flat = tf.reshape(scores, [scores.shape[0]!, scores.shape[1]!, -1]);
  const shifted = tf.sub(flat, tf.max(flat, 1, true));
  const logProb = tf.reshape(tf.sub(shifted, tf.log(tf.sum(tf.exp(shifted), 1, true))), scores.shape);
  return [negativeLogLikelihood(call, logProb, call.input(1), call.optionalInput(2)), logProb];
};

/** Loss operators. */
export const LOSS_OPERATORS: OperatorFamily = {
  NegativeLogLikelihoodLoss: [{ since: 12, run: nllLoss }],
  SoftmaxCrossEntropyLoss: [{ since: 12, run: softmaxCrossEntropy }],
};
