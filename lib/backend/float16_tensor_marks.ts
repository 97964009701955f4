/**
 * Which tfjs tensors hold float16 values. tfjs has no float16 dtype: a
 * float16 tensor is a float32 tensor whose values are exactly representable
 * in float16, marked here (by `half(tensor)`, or as a float16 output of the
 * device). The tracer reads the mark of the constants it captures, so a
 * float16 constant made inside a model stays float16 in its graph.
 */
import type * as tf from '@tensorflow/tfjs';

const float16Tensors = new WeakSet<tf.Tensor>();

/** Marks `t` (a float32 tensor holding float16 values) as float16. */
export function markFloat16Tensor(t: tf.Tensor): void {
  float16Tensors.add(t);
}

/** True if `t` was marked as holding float16 values. */
export function isFloat16Tensor(t: tf.Tensor): boolean {
  return float16Tensors.has(t);
}
