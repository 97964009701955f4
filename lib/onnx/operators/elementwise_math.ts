/**
 * Element-wise math functions of one tensor: Abs, Neg, Sqrt, Exp, Log,
 * Reciprocal, Floor, Ceil, Round (half to even), Sign, Erf, the trigonometric
 * and hyperbolic functions and their inverses, IsNaN and IsInf.
 */
import * as tf from '@tensorflow/tfjs';
import type { OperatorFamily, OperatorImplementation } from './operator.js';

function unary(fn: (x: tf.Tensor) => tf.Tensor): OperatorImplementation {
  return (call) => [fn(call.input(0))];
}

const isInf: OperatorImplementation = (call) => {
  const x = call.input(0);
  const positive = call.attrs.int('detect_positive', 1) === 1;
  const negative = call.attrs.int('detect_negative', 1) === 1;
  if (positive && negative) return [tf.isInf(x)];
  if (positive) return [tf.equal(x, Infinity)];
  if (negative) return [tf.equal(x, -Infinity)];
  return [tf.zerosLike(x).cast('bool')];
};

/** Math functions. */
export const ELEMENTWISE_MATH_OPERATORS: OperatorFamily = {
  Abs: [{ since: 1, run: unary(tf.abs) }],
  Neg: [{ since: 1, run: unary(tf.neg) }],
  Sqrt: [{ since: 1, run: unary(tf.sqrt) }],
  Exp: [{ since: 1, run: unary(tf.exp) }],
  Log: [{ since: 1, run: unary(tf.log) }],
  Reciprocal: [{ since: 1, run: unary(tf.reciprocal) }],
  Floor: [{ since: 1, run: unary(tf.floor) }],
  Ceil: [{ since: 1, run: unary(tf.ceil) }],
  Round: [{ since: 11, run: unary(tf.round) }],
  Sign: [{ since: 9, run: unary(tf.sign) }],
  Erf: [{ since: 9, run: unary(tf.erf) }],
  Sin: [{ since: 7, run: unary(tf.sin) }],
  Cos: [{ since: 7, run: unary(tf.cos) }],
  Tan: [{ since: 7, run: unary(tf.tan) }],
  Asin: [{ since: 7, run: unary(tf.asin) }],
  Acos: [{ since: 7, run: unary(tf.acos) }],
  Atan: [{ since: 7, run: unary(tf.atan) }],
  Sinh: [{ since: 9, run: unary(tf.sinh) }],
  Cosh: [{ since: 9, run: unary(tf.cosh) }],
  Asinh: [{ since: 9, run: unary(tf.asinh) }],
  Acosh: [{ since: 9, run: unary(tf.acosh) }],
  Atanh: [{ since: 9, run: unary(tf.atanh) }],
  IsNaN: [{ since: 9, run: unary(tf.isNaN) }],
  IsInf: [{ since: 10, run: isInf }],
};
