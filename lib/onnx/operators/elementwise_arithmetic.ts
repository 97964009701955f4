/**
 * Arithmetic on tensors, element by element with numpy broadcasting: Add,
 * Sub, Mul, Div, Pow, Mod, BitShift, and the variadic Max, Min, Sum and Mean.
 *
 * Before opset 7, binary operators broadcast only when the `broadcast`
 * attribute says so, aligning the second input at `axis`; that form is
 * supported too.
 */
import * as tf from '@tensorflow/tfjs';
import type { OperatorCall, OperatorFamily, OperatorImplementation } from './operator.js';

/** The two inputs of a binary operator, with legacy (opset < 7) `broadcast`/`axis` alignment applied. */
export function binaryInputs(call: OperatorCall): [tf.Tensor, tf.Tensor] {
  const a = call.input(0);
  let b = call.input(1);
  if (call.opset < 7 && call.attrs.int('broadcast', 0) === 1 && call.attrs.has('axis')) {
    const axis = call.attrs.int('axis');
    const start = axis < 0 ? axis + a.rank : axis;
    const trailing = a.rank - start - b.rank;
    b = tf.reshape(b, [...b.shape, ...new Array<number>(Math.max(trailing, 0)).fill(1)]);
  }
  return [a, b];
}

function binary(fn: (a: tf.Tensor, b: tf.Tensor) => tf.Tensor): OperatorImplementation {
  return (call) => {
    const [a, b] = binaryInputs(call);
    return [fn(a, b)];
  };
}

/**
 * An integer divisor with zeros replaced by ones: integer division by zero is
 * undefined in ONNX, and traps in the wasm backend (the model is traced on
 * zero inputs).
 */
function nonZeroDivisor(b: tf.Tensor): tf.Tensor {
  return b.dtype === 'int32' ? tf.where(tf.equal(b, 0), tf.onesLike(b), b) : b;
}

/** Integer division that truncates toward zero, as C does (tfjs divides int32 with floor). */
function divide(a: tf.Tensor, b: tf.Tensor): tf.Tensor {
  if (a.dtype !== 'int32' || b.dtype !== 'int32') return tf.div(a, b);
  const divisor = nonZeroDivisor(b);
  const floor = tf.floorDiv(a, divisor);
  const inexact = tf.notEqual(tf.sub(a, tf.mul(floor, divisor)), 0);
  const negative = tf.notEqual(tf.less(a, 0), tf.less(divisor, 0));
  return tf.where(tf.logicalAnd(inexact, negative), tf.add(floor, tf.scalar(1, 'int32')), floor);
}

/** `a ** b` in the type of `a`, with integer results rounded as numpy does for exact powers. */
function power(a: tf.Tensor, b: tf.Tensor): tf.Tensor {
  const asFloat = (t: tf.Tensor) => (t.dtype === 'float32' ? t : tf.cast(t, 'float32'));
  const result = tf.pow(asFloat(a), asFloat(b));
  return a.dtype === 'int32' ? tf.cast(tf.round(result), 'int32') : result;
}

/** Pow; a float32 base squared by a one-element constant 2 that widens nothing is a Square (x·x, a single pass). */
const powOperator: OperatorImplementation = (call) => {
  const exponent = call.fixedInput(1);
  if (exponent?.data.length === 1 && Number(exponent.data[0]) === 2 && call.inputDtype(0) === 'float32' && exponent.shape.length <= call.inputShape(0).length) {
    return [tf.square(call.input(0))];
  }
  return binary(power)(call);
};

/** Mod with the sign of the divisor (fmod = 0) or of the dividend (fmod = 1, C's fmod). */
const modulo: OperatorImplementation = (call) => {
  const [a, divisor] = binaryInputs(call);
  const b = nonZeroDivisor(divisor);
  const floorMod = tf.mod(a, b);
  if (call.attrs.int('fmod', 0) === 0) return [floorMod];
  const wrongSign = tf.logicalAnd(tf.notEqual(floorMod, 0), tf.notEqual(tf.less(floorMod, 0), tf.less(a, 0)));
  return [tf.where(wrongSign, tf.sub(floorMod, b), floorMod)];
};

/** Shifts unsigned integers left (multiplying by 2^y) or right (dividing by 2^y, rounding down). */
const bitShift: OperatorImplementation = (call) => {
  const [x, y] = binaryInputs(call);
  const factor = tf.cast(tf.round(tf.pow(tf.scalar(2), tf.cast(y, 'float32'))), 'int32');
  return [call.attrs.string('direction') === 'LEFT' ? tf.mul(x, factor) : tf.floorDiv(x, factor)];
};

function variadic(fn: (a: tf.Tensor, b: tf.Tensor) => tf.Tensor, finish?: (sum: tf.Tensor, count: number) => tf.Tensor): OperatorImplementation {
  return (call) => {
    const inputs = Array.from({ length: call.inputCount }, (_, i) => call.input(i));
    const combined = inputs.slice(1).reduce(fn, inputs[0]!);
    return [finish ? finish(combined, inputs.length) : combined];
  };
}

/** Arithmetic operators. */
export const ELEMENTWISE_ARITHMETIC_OPERATORS: OperatorFamily = {
  Add: [{ since: 1, run: binary(tf.add) }],
  Sub: [{ since: 1, run: binary(tf.sub) }],
  Mul: [{ since: 1, run: binary(tf.mul) }],
  Div: [{ since: 1, run: binary(divide) }],
  Pow: [{ since: 1, run: powOperator }],
  Mod: [{ since: 10, run: modulo }],
  BitShift: [{ since: 11, run: bitShift }],
  Max: [{ since: 1, run: variadic(tf.maximum) }],
  Min: [{ since: 1, run: variadic(tf.minimum) }],
  Sum: [{ since: 1, run: variadic(tf.add) }],
  Mean: [{ since: 1, run: variadic(tf.add, (sum, count) => tf.div(sum, count)) }],
};
