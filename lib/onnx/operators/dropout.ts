/**
 * Dropout: the identity at inference (the optional mask output is all true);
 * in training mode (opset 12+, `training_mode` known at import) each element
 * is kept with probability `1 - ratio` and scaled by `1 / (1 - ratio)`, with a
 * fresh random mask on every run.
 */
import * as tf from '@tensorflow/tfjs';
import { hostNumbers } from '../proto/host_tensor.js';
import type { OperatorCall, OperatorFamily, OperatorImplementation } from './operator.js';

function trainingRatio(call: OperatorCall): number {
  if (call.opset < 12) return 0;
  const training = call.optionalConstantInput(2);
  if (!training || hostNumbers(training)[0] === 0) return 0;
  const ratio = call.optionalConstantInput(1);
  return ratio ? hostNumbers(ratio)[0]! : 0.5;
}

const dropout: OperatorImplementation = (call) => {
  const x = call.input(0);
  const ratio = trainingRatio(call);
  if (ratio === 0) return [x, call.hasOutput(1) ? tf.ones(x.shape, 'bool') : undefined];
  const keep = tf.greaterEqual(tf.randomUniform(x.shape, 0, 1), ratio);
  return [tf.div(tf.mul(x, tf.cast(keep, x.dtype)), 1 - ratio), keep];
};

/** The Dropout operator. */
export const DROPOUT_OPERATORS: OperatorFamily = {
  Dropout: [{ since: 1, run: dropout }],
};
