/**
 * The losses of PopART's `ai.graphcore` domain, as PopART's builder writes
 * them (`aiGraphcore.nllloss`, `l1loss`, `identityloss`):
 *
 * - `Nll(probs [..., C], label [...])`: the negative log likelihood of the
 *   label's class, `-log(probs[label])`, or `-probs[label]` with
 *   `inputIsLogProbability`; labels equal to `ignoreIndex` count for nothing
 *   (and not in the mean);
 * - `L1(x)`: `lambda · |x|`;
 * - `IdentityLoss(x)`: `x`.
 *
 * Each reduces its per-element losses as its `reduction` attribute says:
 * `Sum`, `Mean` (the default) or `None`.
 */
import * as tf from '@tensorflow/tfjs';
import { OnnxError } from '../proto/onnx_errors.js';
import { oneHotMask } from './one_hot_mask.js';
import type { OperatorCall, OperatorFamily, OperatorImplementation } from './operator.js';

const REDUCTIONS = ['Sum', 'Mean', 'None'] as const;
type Reduction = (typeof REDUCTIONS)[number];

function reductionOf(call: OperatorCall): Reduction {
  const reduction = call.attrs.string('reduction', 'Mean');
  if (!(REDUCTIONS as readonly string[]).includes(reduction)) {
    throw new OnnxError(`${call.where}: reduction '${reduction}' is not one of ${REDUCTIONS.join(', ')}`);
  }
  return reduction as Reduction;
}

/** Reduces per-element losses; a mean divides by `count` when given (the elements that count). */
function reduce(losses: tf.Tensor, reduction: Reduction, count?: tf.Tensor): tf.Tensor {
  if (reduction === 'None') return losses;
  if (reduction === 'Sum') return tf.sum(losses);
  return count ? tf.div(tf.sum(losses), tf.maximum(count, 1)) : tf.mean(losses);
}

const nll: OperatorImplementation = (call) => {
  const probs = call.input(0);
  const labelShape = call.inputShape(1);
  const classes = probs.shape[probs.rank - 1]!;
  if (labelShape.length !== probs.rank - 1 || labelShape.some((d, i) => d !== probs.shape[i])) {
    throw new OnnxError(
      `${call.where}: the labels have shape [${labelShape.join(', ')}], but probabilities of shape [${probs.shape.join(', ')}] ` +
        `need labels of shape [${probs.shape.slice(0, -1).join(', ')}] (the classes are the last dimension)`,
    );
  }
  const labels = call.inputDtype(1) === 'int32' ? call.input(1) : tf.cast(call.input(1), 'int32');
  const ignored = call.attrs.has('ignoreIndex') ? tf.equal(labels, call.attrs.int('ignoreIndex')) : undefined;
  const safe = ignored ? tf.where(ignored, tf.zerosLike(labels), labels) : labels;
  const picked = tf.sum(tf.where(oneHotMask(safe, classes), probs, 0), -1);
  const logProbability = call.attrs.int('inputIsLogProbability', 0) !== 0 ? picked : tf.log(picked);
  const kept = ignored ? tf.cast(tf.logicalNot(ignored), probs.dtype) : undefined;
  const losses = kept ? tf.mul(tf.neg(logProbability), kept) : tf.neg(logProbability);
  return [reduce(losses, reductionOf(call), kept ? tf.sum(kept) : undefined)];
};

const l1: OperatorImplementation = (call) => [reduce(tf.mul(tf.abs(call.input(0)), call.attrs.float('lambda')), reductionOf(call))];

const identityLoss: OperatorImplementation = (call) => [reduce(call.input(0), reductionOf(call))];

/** The `ai.graphcore` losses. */
export const GRAPHCORE_LOSS_OPERATORS: OperatorFamily = {
  Nll: [{ since: 1, run: nll }],
  L1: [{ since: 1, run: l1 }],
  IdentityLoss: [{ since: 1, run: identityLoss }],
};
