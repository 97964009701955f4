/**
 * Fitting a convolution's input to the window it must read.
 *
 * The gradient kernels here rewrite a gradient as another convolution whose
 * output size is fixed (the filter's size, or the input's). That fixes how
 * many rows and columns the convolution reads, starting at a known offset:
 * more than the tensor has means zero padding, fewer means cropping. The
 * convolution kernels take only non-negative explicit padding, so negative
 * padding becomes a `Slice` first.
 */
import * as tf from '@tensorflow/tfjs';
import type { KernelCallScope } from './kernel_call_scope.js';

/** The padding of one spatial axis: elements added before and after it; a negative count removes elements. */
export interface AxisPadding {
  /** Elements added before the first one (removed when negative). */
  readonly before: number;
  /** Elements added after the last one (removed when negative). */
  readonly after: number;
}

/** The padding that makes an axis of `size` elements, with `before` elements added at its start, exactly `extent` long. */
export function padToExtent(size: number, before: number, extent: number): AxisPadding {
  return { before, after: extent - before - size };
}

/**
 * The padding of the input of a filter gradient written as a convolution of
 * the input with the output gradient: the window starts at the forward
 * convolution's top/left padding and spans the last filter tap's reach,
 * `(filterSize - 1) * dilation + (outSize - 1) * stride + 1`.
 */
export function filterGradientPadding(info: tf.backend_util.Conv2DInfo): { rows: AxisPadding; cols: AxisPadding } {
  return {
    rows: padToExtent(
      info.inHeight,
      info.padInfo.top,
      (info.filterHeight - 1) * info.dilationHeight + (info.outHeight - 1) * info.strideHeight + 1,
    ),
    cols: padToExtent(
      info.inWidth,
      info.padInfo.left,
      (info.filterWidth - 1) * info.dilationWidth + (info.outWidth - 1) * info.strideWidth + 1,
    ),
  };
}

/** A convolution input cropped where its padding is negative, with the explicit padding left for the convolution. */
export interface FittedInput {
  /** The input, cropped (or the input itself when nothing is cropped). */
  readonly x: tf.TensorInfo;
  /** The non-negative NHWC explicit padding the convolution must add. */
  readonly pad: tf.backend_util.ExplicitPadding;
}

/**
 * Applies `rows` and `cols` to the height and width axes of the NHWC tensor
 * `x`: negative parts crop `x` (a `Slice`; `x` itself when nothing is
 * cropped), the non-negative parts are returned as explicit padding.
 */
export function fitToPadding(scope: KernelCallScope, x: tf.TensorInfo, rows: AxisPadding, cols: AxisPadding): FittedInput {
  const [batch, height, width, channels] = x.shape as [number, number, number, number];
  const top = Math.max(0, -rows.before);
  const bottom = Math.max(0, -rows.after);
  const left = Math.max(0, -cols.before);
  const right = Math.max(0, -cols.after);
  const cropped =
    top + bottom + left + right === 0
      ? x
      : scope.call(tf.Slice, { x }, { begin: [0, top, left, 0], size: [batch, height - top - bottom, width - left - right, channels] });
  const pad: tf.backend_util.ExplicitPadding = [
    [0, 0],
    [Math.max(0, rows.before), Math.max(0, rows.after)],
    [Math.max(0, cols.before), Math.max(0, cols.after)],
    [0, 0],
  ];
  return { x: cropped, pad };
}
