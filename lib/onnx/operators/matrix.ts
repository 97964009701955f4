/**
 * Matrix products: MatMul (numpy semantics: 1-D operands are promoted and
 * batch dimensions broadcast) and Gemm (`alpha * A' B' + beta * C`).
 */
import * as tf from '@tensorflow/tfjs';
import { broadcastShape } from './broadcast_shape.js';
import type { OperatorFamily, OperatorImplementation } from './operator.js';

function sameShape(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

/** `a @ b` as numpy computes it. */
export function numpyMatMul(a: tf.Tensor, b: tf.Tensor, where: string): tf.Tensor {
  const vectorA = a.rank === 1;
  const vectorB = b.rank === 1;
  let x = vectorA ? tf.reshape(a, [1, a.shape[0]!]) : a;
  let y = vectorB ? tf.reshape(b, [b.shape[0]!, 1]) : b;
  const batchX = x.shape.slice(0, -2);
  const batchY = y.shape.slice(0, -2);
  const batch = broadcastShape(batchX, batchY, where);
  const size = (s: readonly number[]) => s.reduce((p, d) => p * d, 1);
  // tfjs broadcasts batch dimensions only when one side has a single batch.
  if (size(batchX) !== 1 && size(batchY) !== 1 && !(sameShape(batchX, batchY))) {
    if (!sameShape(batchX, batch)) x = tf.broadcastTo(x, [...batch, ...x.shape.slice(-2)]);
    if (!sameShape(batchY, batch)) y = tf.broadcastTo(y, [...batch, ...y.shape.slice(-2)]);
  }
  let out = tf.matMul(x, y);
  if (vectorA && vectorB) out = tf.reshape(out, out.shape.slice(0, -2));
  else if (vectorA) out = tf.reshape(out, [...out.shape.slice(0, -2), out.shape[out.rank - 1]!]);
  else if (vectorB) out = tf.reshape(out, out.shape.slice(0, -1));
  return out;
}

const gemm: OperatorImplementation = (call) => {
  const alpha = call.attrs.float('alpha', 1);
  const beta = call.attrs.float('beta', 1);
  let y = tf.matMul(call.input(0), call.input(1), call.attrs.int('transA', 0) === 1, call.attrs.int('transB', 0) === 1);
  if (alpha !== 1) y = tf.mul(y, alpha);
  const c = call.optionalInput(2);
  if (c && beta !== 0) y = tf.add(y, beta === 1 ? c : tf.mul(c, beta));
  return [y];
};

/** Matrix products. */
export const MATRIX_OPERATORS: OperatorFamily = {
  MatMul: [{ since: 1, run: (call) => [numpyMatMul(call.input(0), call.input(1), call.where)] }],
  Gemm: [{ since: 1, run: gemm }],
};
