/**
 * Coordinates of every element of a tensor, with one axis replaced by given
 * indices: how GatherElements, ScatterElements and ReverseSequence address
 * elements through tfjs's gatherND and tensorScatterUpdate.
 */
import * as tf from '@tensorflow/tfjs';

/** Int32 coordinates [...shape, rank] of each element of `shape`, with `indices` (int32, of `shape`) along `axis`. */
export function elementCoordinates(shape: readonly number[], axis: number, indices: tf.Tensor): tf.Tensor {
  const size = shape.reduce((p, d) => p * d, 1);
  const columns = shape.map((_, d) => {
    if (d === axis) return indices;
    const stride = shape.slice(d + 1).reduce((p, s) => p * s, 1);
    const grid = Int32Array.from({ length: size }, (_, i) => Math.floor(i / stride) % shape[d]!);
    return tf.tensor(grid, [...shape], 'int32');
  });
  return tf.stack(columns, shape.length);
}
