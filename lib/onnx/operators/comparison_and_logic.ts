/**
 * Comparisons (Equal, Less, Greater, LessOrEqual, GreaterOrEqual), logical
 * operators on booleans (And, Or, Xor, Not) and element-wise selection
 * (Where), all with numpy broadcasting.
 */
import * as tf from '@tensorflow/tfjs';
import { binaryInputs } from './elementwise_arithmetic.js';
import type { OperatorFamily, OperatorImplementation } from './operator.js';

function binary(fn: (a: tf.Tensor, b: tf.Tensor) => tf.Tensor): OperatorImplementation {
  return (call) => {
    const [a, b] = binaryInputs(call);
    return [fn(a, b)];
  };
}

/** Comparison, logic and selection operators. */
export const COMPARISON_AND_LOGIC_OPERATORS: OperatorFamily = {
  Equal: [{ since: 1, run: binary(tf.equal) }],
  Less: [{ since: 1, run: binary(tf.less) }],
  Greater: [{ since: 1, run: binary(tf.greater) }],
  LessOrEqual: [{ since: 12, run: binary(tf.lessEqual) }],
  GreaterOrEqual: [{ since: 12, run: binary(tf.greaterEqual) }],
  And: [{ since: 1, run: binary(tf.logicalAnd) }],
  Or: [{ since: 1, run: binary(tf.logicalOr) }],
  Xor: [{ since: 1, run: binary(tf.logicalXor) }],
  Not: [{ since: 1, run: (call) => [tf.logicalNot(call.input(0))] }],
  Where: [{ since: 9, run: (call) => [tf.where(call.input(0), call.input(1), call.input(2))] }],
};
