/**
 * The sliding-window geometry shared by convolutions and pooling: kernel
 * size, strides, dilations and the padding before and after each spatial
 * axis (from `pads`, or from `auto_pad` SAME_UPPER / SAME_LOWER / VALID), and
 * the layout changes between ONNX's channels-first tensors and tfjs's
 * channels-last kernels.
 */
import * as tf from '@tensorflow/tfjs';
import { OnnxError } from '../proto/onnx_errors.js';
import type { OperatorCall } from './operator.js';

/** The window of one sliding-window operator, per spatial axis. */
export interface SlidingWindow {
  readonly kernel: number[];
  readonly strides: number[];
  readonly dilations: number[];
  readonly padsBefore: number[];
  readonly padsAfter: number[];
}

/** Kernel extent with dilation: `(k - 1) * d + 1`. */
export function dilatedExtent(kernel: number, dilation: number): number {
  return (kernel - 1) * dilation + 1;
}

/**
 * The window of a node over `spatial` input sizes, with `kernel` the kernel's
 * spatial shape (from the weights or `kernel_shape`).
 */
export function slidingWindow(call: OperatorCall, spatial: readonly number[], kernel: readonly number[]): SlidingWindow {
  const n = spatial.length;
  const strides = call.attrs.ints('strides', new Array<number>(n).fill(1));
  const dilations = call.attrs.ints('dilations', new Array<number>(n).fill(1));
  const autoPad = call.attrs.string('auto_pad', 'NOTSET');
  let padsBefore: number[];
  let padsAfter: number[];
  if (autoPad === 'NOTSET') {
    const pads = call.attrs.ints('pads', new Array<number>(2 * n).fill(0));
    padsBefore = pads.slice(0, n);
    padsAfter = pads.slice(n);
  } else if (autoPad === 'VALID') {
    padsBefore = new Array<number>(n).fill(0);
    padsAfter = new Array<number>(n).fill(0);
  } else if (autoPad === 'SAME_UPPER' || autoPad === 'SAME_LOWER') {
    const total = spatial.map((size, i) => {
      const out = Math.ceil(size / strides[i]!);
      return Math.max(0, (out - 1) * strides[i]! + dilatedExtent(kernel[i]!, dilations[i]!) - size);
    });
    const small = total.map((t) => Math.floor(t / 2));
    const large = total.map((t, i) => t - small[i]!);
    [padsBefore, padsAfter] = autoPad === 'SAME_UPPER' ? [small, large] : [large, small];
  } else {
    throw new OnnxError(`${call.where}: unknown auto_pad '${autoPad}'`, { location: call.where });
  }
  return { kernel: [...kernel], strides, dilations, padsBefore, padsAfter };
}

/** NC[spatial] → N[spatial]C. */
export function toChannelsLast(x: tf.Tensor): tf.Tensor {
  return tf.transpose(x, [0, ...Array.from({ length: x.rank - 2 }, (_, i) => i + 2), 1]);
}

/** N[spatial]C → NC[spatial]. */
export function toChannelsFirst(x: tf.Tensor): tf.Tensor {
  return tf.transpose(x, [0, x.rank - 1, ...Array.from({ length: x.rank - 2 }, (_, i) => i + 1)]);
}

/** Pads the spatial axes of a channels-first tensor. */
export function padSpatial(x: tf.Tensor, before: readonly number[], after: readonly number[], value: number): tf.Tensor {
  if (before.every((p) => p === 0) && after.every((p) => p === 0)) return x;
  return tf.pad(x, [[0, 0], [0, 0], ...before.map((b, i) => [b, after[i]!] as [number, number])], value);
}
