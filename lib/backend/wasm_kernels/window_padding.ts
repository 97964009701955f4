/**
 * Fitting a convolution's input to the window it must read.
 *
 * The gradient kernels here rewrite a gradient as another convolution (or
 * pooling) whose output size is fixed (the filter's size, or the input's).
 * That fixes how many rows and columns it reads, starting at a known offset:
 * more than the tensor has means padding, fewer means cropping. The
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
    rows: padToExtent(info.inHeight, info.padInfo.top, (info.filterHeight - 1) * info.dilationHeight + (info.outHeight - 1) * info.strideHeight + 1),
    cols: padToExtent(info.inWidth, info.padInfo.left, (info.filterWidth - 1) * info.dilationWidth + (info.outWidth - 1) * info.strideWidth + 1),
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
 * The NHWC tensor `x` without `top`/`bottom` rows and `left`/`right` columns
 * (`x` itself when nothing is removed). The slice runs on `x` seen as
 * `[batch, height, width·channels]`, so it copies whole row segments rather
 * than one pixel at a time (the wasm `Slice` copies its innermost runs one by
 * one, in JavaScript).
 */
function crop(scope: KernelCallScope, x: tf.TensorInfo, top: number, bottom: number, left: number, right: number): tf.TensorInfo {
  if (top + bottom + left + right === 0) return x;
  const [batch, height, width, channels] = x.shape as [number, number, number, number];
  const rows = height - top - bottom;
  const cols = width - left - right;
  const flat = scope.call(tf.Slice, { x: scope.reshape(x, [batch, height, width * channels]) }, { begin: [0, top, left * channels], size: [batch, rows, cols * channels] });
  return scope.reshape(flat, [batch, rows, cols, channels]);
}

/**
 * Applies `rows` and `cols` to the height and width axes of the NHWC tensor
 * `x`: negative parts crop `x` (a `Slice`; `x` itself when nothing is
 * cropped), the non-negative parts are returned as explicit padding.
 */
export function fitToPadding(scope: KernelCallScope, x: tf.TensorInfo, rows: AxisPadding, cols: AxisPadding): FittedInput {
  const cropped = crop(scope, x, Math.max(0, -rows.before), Math.max(0, -rows.after), Math.max(0, -cols.before), Math.max(0, -cols.after));
  const pad: tf.backend_util.ExplicitPadding = [
    [0, 0],
    [Math.max(0, rows.before), Math.max(0, rows.after)],
    [Math.max(0, cols.before), Math.max(0, cols.after)],
    [0, 0],
  ];
  return { x: cropped, pad };
}

/**
 * Applies `rows` and `cols` to the height and width axes of the NHWC tensor
 * `x`: negative parts crop it, positive parts add rows and columns of
 * `value` (`x` itself when there is nothing to do).
 */
export function padOrCrop(scope: KernelCallScope, x: tf.TensorInfo, rows: AxisPadding, cols: AxisPadding, value: number): tf.TensorInfo {
  const { x: cropped, pad } = fitToPadding(scope, x, rows, cols);
  if (pad.every(([before, after]) => before === 0 && after === 0)) return cropped;
  return scope.call(tf.PadV2, { x: cropped }, { paddings: pad, constantValue: value });
}

/** `dy` with `strideHeight - 1` zero rows after each row and `strideWidth - 1` zero columns after each column. */
function spread(scope: KernelCallScope, dy: tf.TensorInfo, strideHeight: number, strideWidth: number): tf.TensorInfo {
  if (strideHeight === 1 && strideWidth === 1) return dy;
  const [batch, height, width, channels] = dy.shape as [number, number, number, number];
  const gaps = scope.call(
    tf.PadV2,
    { x: scope.reshape(dy, [batch, height, 1, width, 1, channels]) },
    {
      paddings: [
        [0, 0],
        [0, 0],
        [0, strideHeight - 1],
        [0, 0],
        [0, strideWidth - 1],
        [0, 0],
      ],
      constantValue: 0,
    },
  );
  return scope.reshape(gaps, [batch, height * strideHeight, width * strideWidth, channels]);
}

/**
 * The input of an input gradient written as a transposed convolution: the
 * NHWC output gradient `dy` spread by the forward strides (zeros between its
 * elements) and fitted so that a stride-1 correlation with the filter turned
 * by 180° at the forward dilation gives exactly the input's height and
 * width. The window's first tap lies `(filterSize - 1)·dilation - forwardPad`
 * elements before the spread `dy`, and the window ends where the input does;
 * parts of `dy` the window never reaches are cropped.
 */
export function inputGradientInput(scope: KernelCallScope, dy: tf.TensorInfo, info: tf.backend_util.Conv2DInfo): FittedInput {
  const spreadDy = spread(scope, dy, info.strideHeight, info.strideWidth);
  const reachHeight = (info.filterHeight - 1) * info.dilationHeight;
  const reachWidth = (info.filterWidth - 1) * info.dilationWidth;
  return fitToPadding(
    scope,
    spreadDy,
    padToExtent(spreadDy.shape[1]!, reachHeight - info.padInfo.top, info.inHeight + reachHeight),
    padToExtent(spreadDy.shape[2]!, reachWidth - info.padInfo.left, info.inWidth + reachWidth),
  );
}
