/**
 * Softmax, LogSoftmax and Hardmax. From opset 13 they work along one axis
 * (default -1); before, the input is seen as a 2-D matrix split at `axis`
 * (default 1) and the function runs along its rows.
 */
import * as tf from '@tensorflow/tfjs';
import { normalizeAxis } from './axes.js';
import { oneHotMask } from './one_hot_mask.js';
import type { OperatorFamily, OperatorImplementation, OperatorVersion } from './operator.js';

type AlongAxis = (x: tf.Tensor, axis: number) => tf.Tensor;

const softmaxAlong: AlongAxis = (x, axis) => {
  if (axis === x.rank - 1) return tf.softmax(x);
  const shifted = tf.sub(x, tf.max(x, axis, true));
  const e = tf.exp(shifted);
  return tf.div(e, tf.sum(e, axis, true));
};

const logSoftmaxAlong: AlongAxis = (x, axis) => {
  const shifted = tf.sub(x, tf.max(x, axis, true));
  return tf.sub(shifted, tf.log(tf.sum(tf.exp(shifted), axis, true)));
};

/** 1 at the first maximum along `axis`, 0 elsewhere. */
const hardmaxAlong: AlongAxis = (x, axis) => {
  const hot = tf.cast(oneHotMask(tf.argMax(x, axis), x.shape[axis]!), x.dtype);
  const perm = Array.from({ length: x.rank }, (_, i) => (i < axis ? i : i === axis ? x.rank - 1 : i - 1));
  return axis === x.rank - 1 ? hot : tf.transpose(hot, perm);
};

/** Before opset 13: along the rows of the input seen as a matrix split at `axis` (default 1). */
function coercedTo2d(fn: AlongAxis): OperatorImplementation {
  return (call) => {
    const x = call.input(0);
    const axis = normalizeAxis(call.attrs.int('axis', 1), x.rank, call.where);
    const rows = x.shape.slice(0, axis).reduce((p, d) => p * d, 1);
    const flat = tf.reshape(x, [rows, x.size / Math.max(rows, 1)]);
    return [tf.reshape(fn(flat, 1), x.shape)];
  };
}

/** From opset 13: along `axis` (default -1). */
function alongOneAxis(fn: AlongAxis): OperatorImplementation {
  return (call) => {
    const x = call.input(0);
    return [fn(x, normalizeAxis(call.attrs.int('axis', -1), x.rank, call.where))];
  };
}

function versions(fn: AlongAxis): OperatorVersion[] {
  return [
    { since: 1, run: coercedTo2d(fn) },
    { since: 13, run: alongOneAxis(fn) },
  ];
}

/** Softmax-like operators. */
export const SOFTMAX_OPERATORS: OperatorFamily = {
  Softmax: versions(softmaxAlong),
  LogSoftmax: versions(logSoftmaxAlong),
  Hardmax: versions(hardmaxAlong),
};
