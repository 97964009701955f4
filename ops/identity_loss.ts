/**
 * `identityLoss`: PopTorch's `identity_loss`, for custom losses.
 */
import * as tf from '@tensorflow/tfjs';
import { markLoss } from '../lib/trace/loss_marker.js';

/** How {@link identityLoss} reduces its input. */
export type LossReduction = 'sum' | 'mean' | 'none';

/**
 * Marks `x` as the model's loss after reducing it (`'mean'` or `'sum'` over
 * all elements, or `'none'` to keep it as is). The backward pass starts from a
 * gradient of ones on the result. A model wrapped by `trainingModel` returns
 * `[output, identityLoss(...)]` to compute its own loss.
 *
 * As in PopTorch, several calls can be made in one model if they all lead to
 * one final loss: a marked loss used to compute another (`identityLoss(tf.add(
 * identityLoss(a, 'sum'), identityLoss(b, 'mean')), 'sum')`) is an
 * intermediate loss, a plain reduction that may be returned as an output. The
 * final loss may also be returned as an output besides the loss.
 */
export function identityLoss(x: tf.Tensor, reduction: LossReduction = 'mean'): tf.Tensor {
  if (!(x instanceof tf.Tensor)) throw new TypeError(`identityLoss: expected a tf.Tensor, got ${typeof x}`);
  let loss: tf.Tensor;
  switch (reduction) {
    case 'mean':
      loss = tf.mean(x);
      break;
    case 'sum':
      loss = tf.sum(x);
      break;
    case 'none':
      loss = tf.clone(x);
      break;
    default:
      throw new RangeError(`identityLoss: unknown reduction '${String(reduction)}'; expected 'sum', 'mean' or 'none'`);
  }
  markLoss(loss, x);
  return loss;
}
