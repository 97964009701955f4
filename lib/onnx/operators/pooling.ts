/**
 * Pooling over 1, 2 or 3 spatial axes: MaxPool (with its optional Indices
 * output for 2-D pooling), AveragePool (with `count_include_pad`),
 * GlobalMaxPool and GlobalAveragePool, with explicit or automatic padding,
 * strides, `ceil_mode` and (for MaxPool) dilations.
 *
 * Padding is applied before the tfjs pool (-infinity for max, 0 for average,
 * whose divisor then counts only the cells the ONNX operator counts). Dilated
 * and 3-D max pooling take the maximum of strided slices, one per kernel tap.
 */
import * as tf from '@tensorflow/tfjs';
import { OnnxError } from '../proto/onnx_errors.js';
import type { OperatorCall, OperatorFamily, OperatorImplementation } from './operator.js';
import { dilatedExtent, padSpatial, slidingWindow, toChannelsFirst, toChannelsLast, type SlidingWindow } from './sliding_window.js';

/** The window of a pooling node, with `ceil_mode`'s extra padding at the end of each axis. */
function poolingWindow(call: OperatorCall, spatial: readonly number[]): SlidingWindow & { extra: number[] } {
  const window = slidingWindow(call, spatial, call.attrs.ints('kernel_shape', []));
  if (window.kernel.length !== spatial.length) {
    throw new OnnxError(`${call.where}: kernel_shape has ${window.kernel.length} axes for ${spatial.length} spatial axes`, {
      location: call.where,
    });
  }
  const ceil = call.attrs.int('ceil_mode', 0) === 1;
  const extra = spatial.map((size, i) => {
    const padded = size + window.padsBefore[i]! + window.padsAfter[i]!;
    const span = padded - dilatedExtent(window.kernel[i]!, window.dilations[i]!);
    let out = (ceil ? Math.ceil(span / window.strides[i]!) : Math.floor(span / window.strides[i]!)) + 1;
    // A window may not start in the padding at the end.
    if (ceil && (out - 1) * window.strides[i]! >= size + window.padsBefore[i]!) out--;
    return Math.max((out - 1) * window.strides[i]! + dilatedExtent(window.kernel[i]!, window.dilations[i]!) - padded, 0);
  });
  return { ...window, extra };
}

type ChannelsLastPool = (x: tf.Tensor, kernel: number[], strides: number[]) => tf.Tensor;

/** Runs a tfjs pool (2-D or 3-D, channels-last, no padding) on a channels-first tensor of 1 to 3 spatial axes (3 only with `pool3d`). */
function poolChannelsFirst(x: tf.Tensor, kernel: number[], strides: number[], pool2d: ChannelsLastPool, pool3d?: ChannelsLastPool): tf.Tensor {
  if (x.rank === 3) return tf.squeeze(poolChannelsFirst(tf.expandDims(x, 2), [1, ...kernel], [1, ...strides], pool2d), [2]);
  const pool = x.rank === 4 ? pool2d : pool3d;
  if (!pool) throw new RangeError(`no pool for rank ${x.rank}`);
  return toChannelsFirst(pool(toChannelsLast(x), kernel, strides));
}

const max2d: ChannelsLastPool = (x, k, s) => tf.maxPool(x as tf.Tensor4D, k as [number, number], s as [number, number], 'valid');
const avg2d: ChannelsLastPool = (x, k, s) => tf.avgPool(x as tf.Tensor4D, k as [number, number], s as [number, number], 'valid');
const avg3d: ChannelsLastPool = (x, k, s) => tf.avgPool3d(x as tf.Tensor5D, k as [number, number, number], s as [number, number, number], 'valid');

/** Max over the kernel taps of a (dilated) window, each tap a strided slice. */
function dilatedMaxPool(x: tf.Tensor, window: SlidingWindow): tf.Tensor {
  const spatial = x.shape.slice(2);
  const out = spatial.map((size, i) => Math.floor((size - dilatedExtent(window.kernel[i]!, window.dilations[i]!)) / window.strides[i]!) + 1);
  let result: tf.Tensor | undefined;
  const taps = window.kernel.reduce((p, k) => p * k, 1);
  for (let t = 0; t < taps; t++) {
    let rest = t;
    const offsets = window.kernel.map(() => 0);
    for (let i = window.kernel.length - 1; i >= 0; i--) {
      offsets[i] = (rest % window.kernel[i]!) * window.dilations[i]!;
      rest = Math.floor(rest / window.kernel[i]!);
    }
    const begin = [0, 0, ...offsets];
    const end = [x.shape[0]!, x.shape[1]!, ...offsets.map((o, i) => o + (out[i]! - 1) * window.strides[i]! + 1)];
    const tap = tf.stridedSlice(x, begin, end, [1, 1, ...window.strides]);
    result = result ? tf.maximum(result, tap) : tap;
  }
  return result!;
}

/**
 * 2-D max pooling with the flat index of each maximum in the (unpadded)
 * input: row-major per batch and channel, or with `storage_order` 1
 * column-major.
 */
function maxPoolWithIndices(call: OperatorCall, x: tf.Tensor, padded: tf.Tensor, window: SlidingWindow): tf.Tensor[] {
  if (x.rank !== 4 || window.dilations.some((d) => d > 1)) {
    throw new OnnxError(`${call.where}: the Indices output of MaxPool is supported for 2-D pooling without dilations`, {
      location: call.where,
    });
  }
  const [, channels, height, width] = x.shape as [number, number, number, number];
  const [paddedHeight, paddedWidth] = padded.shape.slice(2) as [number, number];
  const { result, indexes } = tf.maxPoolWithArgmax(
    toChannelsLast(padded) as tf.Tensor4D,
    window.kernel as [number, number],
    window.strides as [number, number],
    'valid',
    true,
  );
  const int = (n: number) => tf.scalar(n, 'int32');
  // indexes = ((n * paddedHeight + y) * paddedWidth + x) * channels + c
  const c = tf.mod(indexes, int(channels));
  const pixel = tf.floorDiv(indexes, int(channels));
  const column = tf.sub(tf.mod(pixel, int(paddedWidth)), int(window.padsBefore[1]!));
  const row = tf.sub(tf.mod(tf.floorDiv(pixel, int(paddedWidth)), int(paddedHeight)), int(window.padsBefore[0]!));
  const n = tf.floorDiv(pixel, int(paddedWidth * paddedHeight));
  const plane = tf.add(tf.mul(n, int(channels)), c);
  const columnMajor = call.attrs.int('storage_order', 0) === 1;
  const inPlane = columnMajor ? tf.add(tf.mul(column, int(height)), row) : tf.add(tf.mul(row, int(width)), column);
  return [toChannelsFirst(result), toChannelsFirst(tf.add(tf.mul(plane, int(height * width)), inPlane))];
}

/**
 * The 2-D max pooling of a channels-first `x` with its padding given to the
 * tfjs kernel, which leaves padded cells out of each window, as padding with
 * -∞ does: no padded copy of `x` is made (ResNet's first pooling pads
 * [1, 64, 32, 32] by one on each side). Undefined where a window could lie
 * wholly in the padding (a pad as long as the window), whose maximum would
 * be -∞.
 */
function paddedMaxPool2d(x: tf.Tensor, window: SlidingWindow, after: readonly number[]): tf.Tensor | undefined {
  if (x.rank !== 4 || window.dilations.some((d) => d > 1)) return undefined;
  if ([...window.padsBefore, ...after].some((p, i) => p >= window.kernel[i % 2]!)) return undefined;
  const explicit: tf.backend_util.ExplicitPadding = [
    [0, 0],
    [window.padsBefore[0]!, after[0]!],
    [window.padsBefore[1]!, after[1]!],
    [0, 0],
  ];
  const pad = explicit.flat().every((p) => p === 0) ? 'valid' : explicit;
  return toChannelsFirst(tf.maxPool(toChannelsLast(x) as tf.Tensor4D, window.kernel as [number, number], window.strides as [number, number], pad));
}

const maxPool: OperatorImplementation = (call) => {
  const input = call.input(0);
  const window = poolingWindow(call, input.shape.slice(2));
  // tfjs pools float32 only; integers are exact in float32 up to 2^24.
  const x = input.dtype === 'float32' ? input : tf.cast(input, 'float32');
  const after = window.padsAfter.map((p, i) => p + window.extra[i]!);
  const restore = (t: tf.Tensor) => (input.dtype === 'float32' ? t : tf.cast(t, input.dtype));
  const direct = call.hasOutput(1) ? undefined : paddedMaxPool2d(x, window, after);
  if (direct !== undefined) return [restore(direct)];
  const padded = padSpatial(x, window.padsBefore, after, -Infinity);
  if (call.hasOutput(1)) {
    const [values, indices] = maxPoolWithIndices(call, x, padded, window) as [tf.Tensor, tf.Tensor];
    return [restore(values), indices];
  }
  // The wasm backend's 3-D max pool starts from the smallest positive float, not -infinity: use strided slices.
  const pooled = window.dilations.some((d) => d > 1) || x.rank === 5 ? dilatedMaxPool(padded, window) : poolChannelsFirst(padded, window.kernel, window.strides, max2d);
  return [restore(pooled)];
};

const averagePool: OperatorImplementation = (call) => {
  const x = call.input(0);
  const window = poolingWindow(call, x.shape.slice(2));
  const after = window.padsAfter.map((p, i) => p + window.extra[i]!);
  const average = poolChannelsFirst(padSpatial(x, window.padsBefore, after, 0), window.kernel, window.strides, avg2d, avg3d);
  const includePad = call.attrs.int('count_include_pad', 0) === 1;
  const padded = [...window.padsBefore, ...after].some((p) => p > 0);
  if (!padded || (includePad && window.extra.every((e) => e === 0))) return [average];
  // The share of each window the operator counts: real cells, and explicit padding with count_include_pad.
  const ones = tf.ones([1, 1, ...x.shape.slice(2)]);
  const counted = includePad
    ? padSpatial(
        padSpatial(ones, window.padsBefore, window.padsAfter, 1),
        window.padsBefore.map(() => 0),
        window.extra,
        0,
      )
    : padSpatial(ones, window.padsBefore, after, 0);
  const share = poolChannelsFirst(counted, window.kernel, window.strides, avg2d, avg3d);
  return [tf.div(average, share)];
};

function spatialAxes(x: tf.Tensor): number[] {
  return Array.from({ length: x.rank - 2 }, (_, i) => i + 2);
}

/** Pooling operators. */
export const POOLING_OPERATORS: OperatorFamily = {
  MaxPool: [{ since: 1, run: maxPool }],
  AveragePool: [{ since: 1, run: averagePool }],
  GlobalMaxPool: [{ since: 1, run: (call) => [tf.max(call.input(0), spatialAxes(call.input(0)), true)] }],
  GlobalAveragePool: [{ since: 1, run: (call) => [tf.mean(call.input(0), spatialAxes(call.input(0)), true)] }],
};
