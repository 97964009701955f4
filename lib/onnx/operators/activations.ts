/**
 * Activation functions: Relu, LeakyRelu, PRelu, Elu, Celu, Selu, Sigmoid,
 * HardSigmoid, HardSwish, Tanh, Softplus, Softsign, ThresholdedRelu, Shrink
 * and Clip.
 */
import * as tf from '@tensorflow/tfjs';
import type { OperatorCall, OperatorFamily, OperatorImplementation } from './operator.js';

/** `x > 0 ? x : alpha * (exp(x) - 1)`. */
function elu(x: tf.Tensor, alpha: number): tf.Tensor {
  return tf.where(tf.greater(x, 0), x, tf.mul(tf.sub(tf.exp(x), 1), alpha));
}

const prelu: OperatorImplementation = (call) => {
  const x = call.input(0);
  let slope = call.input(1);
  // Before opset 7, a slope with one value per channel applies along axis 1.
  if (call.opset < 7 && slope.rank === 1 && x.rank > 2 && slope.shape[0] === x.shape[1] && slope.shape[0] !== 1) {
    slope = tf.reshape(slope, [slope.shape[0]!, ...new Array<number>(x.rank - 2).fill(1)]);
  }
  return [tf.where(tf.less(x, 0), tf.mul(x, slope), x)];
};

function clipBounds(call: OperatorCall): [tf.Tensor | number | undefined, tf.Tensor | number | undefined] {
  if (call.opset < 11) {
    return [call.attrs.has('min') ? call.attrs.float('min') : undefined, call.attrs.has('max') ? call.attrs.float('max') : undefined];
  }
  return [call.optionalInput(1), call.optionalInput(2)];
}

const clip: OperatorImplementation = (call) => {
  const [min, max] = clipBounds(call);
  let y = call.input(0);
  if (min !== undefined) y = tf.maximum(y, min);
  if (max !== undefined) y = tf.minimum(y, max);
  return [y];
};

const shrink: OperatorImplementation = (call) => {
  const x = call.input(0);
  const bias = call.attrs.float('bias', 0);
  const lambd = call.attrs.float('lambd', 0.5);
  const zero = tf.zerosLike(x);
  return [tf.where(tf.less(x, -lambd), tf.add(x, bias), tf.where(tf.greater(x, lambd), tf.sub(x, bias), zero))];
};

/** Activation functions. */
export const ACTIVATION_OPERATORS: OperatorFamily = {
  Relu: [{ since: 1, run: (call) => [tf.relu(call.input(0))] }],
  LeakyRelu: [{ since: 1, run: (call) => [tf.leakyRelu(call.input(0), call.attrs.float('alpha', 0.01))] }],
  PRelu: [{ since: 1, run: prelu }],
  Elu: [{ since: 1, run: (call) => [elu(call.input(0), call.attrs.float('alpha', 1))] }],
  Celu: [
    {
      since: 12,
      run: (call) => {
        const alpha = call.attrs.float('alpha', 1);
        return [tf.mul(elu(tf.div(call.input(0), alpha), 1), alpha)];
      },
    },
  ],
  Selu: [
    {
      since: 1,
      run: (call) => {
        // SELU's constants rounded to float32, as ONNX's attribute defaults are.
        const alpha = call.attrs.float('alpha', Math.fround(1.6732632423543772));
        const gamma = call.attrs.float('gamma', Math.fround(1.0507009873554805));
        return [tf.mul(elu(call.input(0), alpha), gamma)];
      },
    },
  ],
  Sigmoid: [{ since: 1, run: (call) => [tf.sigmoid(call.input(0))] }],
  HardSigmoid: [
    {
      since: 1,
      run: (call) => {
        const alpha = call.attrs.float('alpha', 0.2);
        const beta = call.attrs.float('beta', 0.5);
        return [tf.clipByValue(tf.add(tf.mul(call.input(0), alpha), beta), 0, 1)];
      },
    },
  ],
  HardSwish: [
    {
      since: 14,
      run: (call) => {
        const x = call.input(0);
        return [tf.mul(x, tf.clipByValue(tf.add(tf.mul(x, 1 / 6), 0.5), 0, 1))];
      },
    },
  ],
  Tanh: [{ since: 1, run: (call) => [tf.tanh(call.input(0))] }],
  Softplus: [{ since: 1, run: (call) => [tf.softplus(call.input(0))] }],
  Softsign: [
    {
      since: 1,
      run: (call) => {
        const x = call.input(0);
        return [tf.div(x, tf.add(tf.abs(x), 1))];
      },
    },
  ],
  ThresholdedRelu: [
    {
      since: 10,
      run: (call) => {
        const x = call.input(0);
        return [tf.where(tf.greater(x, call.attrs.float('alpha', 1)), x, tf.zerosLike(x))];
      },
    },
  ],
  Shrink: [{ since: 9, run: shrink }],
  Clip: [{ since: 1, run: clip }],
};
