/**
 * One-hot encoding as a boolean mask, computed with a comparison against the
 * class range (the wasm backend's OneHot kernel writes int32 data whatever
 * dtype it is asked for, so tf.oneHot is not used).
 */
import * as tf from '@tensorflow/tfjs';

/** `[..., depth]` booleans, true where the last index equals the value of `indices` (int32). */
export function oneHotMask(indices: tf.Tensor, depth: number): tf.Tensor {
  const classes = tf.tensor1d(
    Array.from({ length: depth }, (_, i) => i),
    'int32',
  );
  return tf.equal(tf.expandDims(indices, -1), classes);
}
