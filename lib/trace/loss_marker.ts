/**
 * Marks the tensors that a model returns as its loss (`ops.identityLoss`), so
 * a training wrapper can tell the loss apart from the other outputs.
 */
import type * as tf from '@tensorflow/tfjs';

const losses = new WeakSet<tf.Tensor>();

/** @internal Marks `tensor` as a loss. */
export function markLoss(tensor: tf.Tensor): void {
  losses.add(tensor);
}

/** True if `tensor` was returned by `ops.identityLoss`. */
export function isMarkedLoss(tensor: unknown): boolean {
  return typeof tensor === 'object' && tensor !== null && losses.has(tensor as tf.Tensor);
}
