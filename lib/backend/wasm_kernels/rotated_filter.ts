/**
 * A convolution filter turned by 180° in its two spatial axes, as the input
 * gradient of a convolution correlates with it.
 *
 * The wasm `Reverse` kernel moves one element at a time, computing each
 * one's position: turning a [3, 3, 16, 32] filter took 0.22 ms, a
 * [3, 3, 64, 128] one 3.5 ms and a [3, 3, 256, 256] one 28 ms. Turning both
 * spatial axes reverses the order of the filter's `height × width` taps,
 * each a contiguous run of `inChannels × outChannels` elements, so the taps
 * are sliced out (each slice one copy) and concatenated in reverse order:
 * 0.07, 0.26 and 2.8 ms, with the same elements.
 */
import * as tf from '@tensorflow/tfjs';
import type { KernelCallScope } from './kernel_call_scope.js';

/** `filter` ([height, width, ...]) with both spatial axes reversed, an intermediate of `k`. */
export function rotatedFilter(k: KernelCallScope, filter: tf.TensorInfo): tf.TensorInfo {
  const [height, width, ...rest] = filter.shape;
  const taps = height! * width!;
  const tap = rest.reduce((n, d) => n * d, 1);
  const rows = k.reshape(filter, [taps, tap]);
  const reversed = Array.from({ length: taps }, (_, i) => k.call(tf.Slice, { x: rows }, { begin: [taps - 1 - i, 0], size: [1, tap] }));
  return k.reshape(k.call(tf.Concat, reversed, { axis: 0 }), filter.shape);
}
