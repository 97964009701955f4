/**
 * Shared test helpers: tolerance checks against independent references.
 */
import * as tf from '@tensorflow/tfjs';
import { expect } from 'vitest';

/** Asserts two tensors have the same shape and values within `rtol`/`atol`. */
export function expectClose(actual: tf.Tensor, expected: tf.Tensor, rtol = 1e-5, atol = 1e-6): void {
  expect(actual.shape).toEqual(expected.shape);
  const a = actual.dataSync();
  const e = expected.dataSync();
  for (let i = 0; i < a.length; i++) {
    const tol = atol + rtol * Math.abs(e[i]!);
    if (!(Math.abs(a[i]! - e[i]!) <= tol)) {
      throw new Error(`element ${i}: ${a[i]} vs expected ${e[i]} (tolerance ${tol})`);
    }
  }
}

/** The tf.Variable holding a layers-model weight (tfjs-layers keeps it in `LayerVariable.val`, which its types hide). */
export function variableOf(weight: tf.LayerVariable): tf.Variable {
  return (weight as unknown as { val: tf.Variable }).val;
}

/** The number of tensors alive in the engine. */
export function liveTensors(): number {
  return tf.memory().numTensors;
}
