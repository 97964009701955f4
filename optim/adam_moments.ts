/**
 * The moments Adam, AdamW and LAMB share (PopART's definition):
 * `m = b1·m + (1 - b1)·g`, `v = b2·v + (1 - b2)·g²` (both from zero), and the
 * updater term `mc / (sqrt(vc) + eps)` with the bias-corrected moments
 * `mc = m / (1 - b1^t)`, `vc = v / (1 - b2^t)` (or `m`, `v` without bias correction).
 */
import * as tf from '@tensorflow/tfjs';
import type { ParameterState } from './optimizer_state.js';

/** The state slot of the first moment. */
export const FIRST_MOMENT = 'expAvg';
/** The state slot of the second moment. */
export const SECOND_MOMENT = 'expAvgSq';

/** The new moments and the updater term of one step. */
export interface AdamMoments {
  readonly firstMoment: tf.Tensor;
  readonly secondMoment: tf.Tensor;
  /** `mc / (sqrt(vc) + eps)`. */
  readonly updater: tf.Tensor;
}

/** One step of the moments for gradient `g`, stored through `stored` (call inside `tf.tidy`). */
export function adamMoments(
  g: tf.Tensor,
  slots: Readonly<ParameterState>,
  betas: readonly [number, number],
  eps: number,
  step: number,
  biasCorrection: boolean,
  stored: (slot: string, value: tf.Tensor) => tf.Tensor,
): AdamMoments {
  const [beta1, beta2] = betas;
  const firstMoment = stored(FIRST_MOMENT, tf.add(tf.mul(slots[FIRST_MOMENT]!, beta1), tf.mul(g, 1 - beta1)));
  const secondMoment = stored(SECOND_MOMENT, tf.add(tf.mul(slots[SECOND_MOMENT]!, beta2), tf.mul(tf.square(g), 1 - beta2)));
  const correction1 = biasCorrection ? 1 - beta1 ** step : 1;
  const correction2 = biasCorrection ? 1 - beta2 ** step : 1;
  const denominator = tf.add(tf.div(tf.sqrt(secondMoment), Math.sqrt(correction2)), eps);
  const updater = tf.div(tf.div(firstMoment, correction1), denominator);
  return { firstMoment, secondMoment, updater };
}
