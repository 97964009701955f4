/**
 * Normalizations: BatchNormalization (inference, and from opset 14 training
 * mode with running statistics), InstanceNormalization, LayerNormalization,
 * LRN and MeanVarianceNormalization.
 */
import * as tf from '@tensorflow/tfjs';
import { OnnxError } from '../proto/onnx_errors.js';
import { allAxes, normalizeAxes, normalizeAxis } from './axes.js';
import type { OperatorFamily, OperatorImplementation } from './operator.js';

/** A per-channel vector [C] shaped to broadcast along axis 1 of a tensor of rank `rank`. */
function perChannel(v: tf.Tensor, rank: number): tf.Tensor {
  return rank <= 2 ? v : tf.reshape(v, [v.size, ...new Array<number>(rank - 2).fill(1)]);
}

/** `(x - mean) * scale / sqrt(variance + epsilon) + bias`. */
function normalize(x: tf.Tensor, mean: tf.Tensor, variance: tf.Tensor, scale: tf.Tensor, bias: tf.Tensor, epsilon: number): tf.Tensor {
  return tf.add(tf.mul(tf.sub(x, mean), tf.mul(scale, tf.rsqrt(tf.add(variance, epsilon)))), bias);
}

const batchNormalization: OperatorImplementation = (call) => {
  const x = call.input(0);
  const [scale, bias, mean, variance] = [1, 2, 3, 4].map((i) => perChannel(call.input(i), x.rank)) as [tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor];
  const epsilon = call.attrs.float('epsilon', 1e-5);
  const training = call.opset >= 14 && call.attrs.int('training_mode', 0) === 1;
  if (!training) {
    if ([1, 2, 3, 4].some((i) => call.hasOutput(i))) {
      throw new OnnxError(`${call.where}: the training outputs of BatchNormalization are supported from opset 14 (training_mode)`, {
        location: call.where,
      });
    }
    return [normalize(x, mean, variance, scale, bias, epsilon)];
  }
  const momentum = call.attrs.float('momentum', 0.9);
  const axes = allAxes(x.rank).filter((a) => a !== 1);
  const batch = tf.moments(x, axes, true);
  const running = (old: tf.Tensor, current: tf.Tensor) => tf.reshape(tf.add(tf.mul(old, momentum), tf.mul(current, 1 - momentum)), [x.shape[1]!]);
  return [normalize(x, batch.mean, batch.variance, scale, bias, epsilon), running(mean, batch.mean), running(variance, batch.variance)];
};

const instanceNormalization: OperatorImplementation = (call) => {
  const x = call.input(0);
  const { mean, variance } = tf.moments(x, allAxes(x.rank).slice(2), true);
  return [normalize(x, mean, variance, perChannel(call.input(1), x.rank), perChannel(call.input(2), x.rank), call.attrs.float('epsilon', 1e-5))];
};

const layerNormalization: OperatorImplementation = (call) => {
  const x = call.input(0);
  const axis = normalizeAxis(call.attrs.int('axis', -1), x.rank, call.where);
  const axes = allAxes(x.rank).slice(axis);
  const { mean, variance } = tf.moments(x, axes, true);
  const inverseStdDev = tf.rsqrt(tf.add(variance, call.attrs.float('epsilon', 1e-5)));
  let y = tf.mul(tf.mul(tf.sub(x, mean), inverseStdDev), call.input(1));
  const bias = call.optionalInput(2);
  if (bias) y = tf.add(y, bias);
  return [y, mean, inverseStdDev];
};

/** Local response normalization across channels: `x / (bias + alpha / size * sum(x^2 over the window)) ^ beta`. */
const lrn: OperatorImplementation = (call) => {
  const x = call.input(0);
  const size = call.attrs.int('size');
  const alpha = call.attrs.float('alpha', 1e-4);
  const beta = call.attrs.float('beta', 0.75);
  const bias = call.attrs.float('bias', 1);
  const before = Math.floor((size - 1) / 2);
  const channels = x.shape[1]!;
  const squares = tf.pad(
    tf.square(x),
    x.shape.map((_, i) => (i === 1 ? [before, size - 1 - before] : [0, 0]) as [number, number]),
  );
  let sum = tf.slice(
    squares,
    x.shape.map(() => 0),
    x.shape,
  );
  for (let offset = 1; offset < size; offset++) {
    sum = tf.add(
      sum,
      tf.slice(
        squares,
        x.shape.map((_, i) => (i === 1 ? offset : 0)),
        x.shape.map((d, i) => (i === 1 ? channels : d)),
      ),
    );
  }
  return [tf.div(x, tf.pow(tf.add(tf.mul(sum, alpha / size), bias), beta))];
};

const meanVarianceNormalization: OperatorImplementation = (call) => {
  const x = call.input(0);
  const axes = normalizeAxes(call.attrs.ints('axes', [0, 2, 3]), x.rank, call.where);
  const { mean, variance } = tf.moments(x, axes, true);
  return [tf.div(tf.sub(x, mean), tf.add(tf.sqrt(variance), 1e-9))];
};

/** Normalization operators. */
export const NORMALIZATION_OPERATORS: OperatorFamily = {
  BatchNormalization: [{ since: 1, run: batchNormalization }],
  InstanceNormalization: [{ since: 1, run: instanceNormalization }],
  LayerNormalization: [{ since: 17, run: layerNormalization }],
  LRN: [{ since: 1, run: lrn }],
  MeanVarianceNormalization: [{ since: 9, run: meanVarianceNormalization }],
};
