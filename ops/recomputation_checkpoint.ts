/**
 * `recomputationCheckpoint`: PopTorch's `recomputationCheckpoint`, for
 * recomputation (`Options.autoRecomputation`).
 */
import * as tf from '@tensorflow/tfjs';
import { currentRecorder } from '../lib/trace/kernel_recorder.js';

/**
 * Marks `tensors` as checkpoints: with recomputation on, the backward pass
 * keeps them instead of recomputing them from earlier checkpoints. Returns the
 * tensors unchanged (one tensor for one argument).
 */
export function recomputationCheckpoint<T extends tf.Tensor | tf.Tensor[]>(...tensors: tf.Tensor[]): T {
  tensors.forEach((t, i) => {
    if (!(t instanceof tf.Tensor)) throw new TypeError(`recomputationCheckpoint: argument ${i} is not a tf.Tensor`);
  });
  const recorder = currentRecorder();
  for (const t of tensors) recorder?.markCheckpoint(t);
  return (tensors.length === 1 ? tensors[0] : tensors) as T;
}
