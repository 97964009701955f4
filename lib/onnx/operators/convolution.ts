/**
 * Convolutions over 1, 2 or 3 spatial axes: Conv and ConvTranspose, with
 * padding (explicit or auto_pad), strides, dilations, groups and bias.
 *
 * ONNX tensors are channels-first and tfjs kernels channels-last, so inputs
 * and results are transposed around the tfjs call. A 1-D convolution runs as a
 * 2-D one of height 1; a dilated kernel is spread out with zeros when tfjs
 * cannot combine dilation with strides. A 1-D or 2-D Conv is one fused tfjs
 * kernel: the padding is the kernel's own (explicit) and the bias is added by
 * it, with no padded copy of the input and no separate addition.
 */
import * as tf from '@tensorflow/tfjs';
import { OnnxError } from '../proto/onnx_errors.js';
import type { OperatorCall, OperatorFamily, OperatorImplementation } from './operator.js';
import { dilatedExtent, padSpatial, slidingWindow, toChannelsFirst, toChannelsLast } from './sliding_window.js';

/**
 * Spreads a channels-first tensor (or a [O, I, k...] kernel) out with
 * `d - 1` zeros between neighbours along each spatial axis.
 */
function spreadOut(w: tf.Tensor, dilations: readonly number[]): tf.Tensor {
  let out = w;
  dilations.forEach((d, i) => {
    if (d === 1) return;
    const axis = i + 2;
    const k = out.shape[axis]!;
    const expanded = tf.expandDims(out, axis + 1);
    const spread = tf.pad(
      expanded,
      expanded.shape.map((_, j) => (j === axis + 1 ? [0, d - 1] : [0, 0]) as [number, number]),
    );
    const merged = tf.reshape(spread, [...out.shape.slice(0, axis), k * d, ...out.shape.slice(axis + 1)]);
    out = tf.slice(
      merged,
      merged.shape.map(() => 0),
      merged.shape.map((s, j) => (j === axis ? dilatedExtent(k, d) : s)),
    );
  });
  return out;
}

/** A channels-first input and kernel seen as 2-D when they are 1-D; `restore` undoes it on the result. */
function asAtLeast2d(x: tf.Tensor, w: tf.Tensor, strides: number[], dilations: number[]) {
  if (x.rank !== 3) return { x, w, strides, dilations, restore: (y: tf.Tensor) => y };
  return {
    x: tf.expandDims(x, 2),
    w: tf.expandDims(w, 2),
    strides: [1, ...strides],
    dilations: [1, ...dilations],
    restore: (y: tf.Tensor) => tf.squeeze(y, [2]),
  };
}

function checkRank(call: OperatorCall, x: tf.Tensor): void {
  if (x.rank < 3 || x.rank > 5)
    throw new OnnxError(`${call.where}: only 1-D, 2-D and 3-D convolutions are supported (input of rank ${x.rank})`, {
      location: call.where,
    });
}

/** Splits a channels-last tensor into `groups` along its channels, or returns it whole. */
function channelGroups(x: tf.Tensor, groups: number): tf.Tensor[] {
  return groups === 1 ? [x] : tf.split(x, groups, x.rank - 1);
}

/** Padding of a channels-last 2-D convolution: none, or explicit amounts before and after each spatial axis. */
type Padding2d = 'valid' | tf.backend_util.ExplicitPadding;

/**
 * One group of a convolution: channels-last input, [M, C, k...] kernel,
 * plus `bias`; a 2-D one takes its padding and bias in the kernel.
 */
function convolve(x: tf.Tensor, w: tf.Tensor, strides: number[], dilations: number[], pad: Padding2d = 'valid', bias?: tf.Tensor): tf.Tensor {
  if (x.rank === 4)
    return tf.fused.conv2d({
      x: x as tf.Tensor4D,
      filter: tf.transpose(w, [2, 3, 1, 0]) as tf.Tensor4D,
      strides: strides as [number, number],
      pad,
      dataFormat: 'NHWC',
      dilations: dilations as [number, number],
      ...(bias ? { bias } : {}),
    });
  const y = tf.conv3d(
    x as tf.Tensor5D,
    tf.transpose(w, [2, 3, 4, 1, 0]) as tf.Tensor5D,
    strides as [number, number, number],
    'valid',
    'NDHWC',
    dilations as [number, number, number],
  );
  return bias ? tf.add(y, bias) : y;
}

/** The Conv of `input` with `weights` (and `bias`), with the node's window and group attributes. */
export function convolution(call: OperatorCall, input: tf.Tensor, weights: tf.Tensor, bias: tf.Tensor | undefined): tf.Tensor {
  checkRank(call, input);
  const group = call.attrs.int('group', 1);
  const window = slidingWindow(call, input.shape.slice(2), call.attrs.ints('kernel_shape') ?? weights.shape.slice(2));
  // 1-D and 2-D convolutions pad in the kernel (1-D: nothing along the added axis); 3-D ones and negative pads pad the input.
  const inKernel = input.rank <= 4 && [...window.padsBefore, ...window.padsAfter].every((p) => p >= 0);
  const padded = inKernel ? input : padSpatial(input, window.padsBefore, window.padsAfter, 0);
  const spatialPads = window.padsBefore.map((before, i): [number, number] => [before, window.padsAfter[i]!]);
  const pad: Padding2d = inKernel ? ([[0, 0], ...(input.rank === 3 ? [[0, 0] as [number, number]] : []), ...spatialPads, [0, 0]] as tf.backend_util.ExplicitPadding) : 'valid';
  const view = asAtLeast2d(padded, weights, window.strides, window.dilations);
  let { w, dilations } = view;
  const strided = view.strides.some((s) => s > 1);
  if (dilations.some((d) => d > 1) && (strided || view.x.rank === 5)) {
    w = spreadOut(w, dilations);
    dilations = dilations.map(() => 1);
  }
  const x = toChannelsLast(view.x);
  const channels = view.x.shape[1]!;
  let y: tf.Tensor;
  if (group === 1) {
    y = convolve(x, w, view.strides, dilations, pad, bias);
  } else if (group === channels && x.rank === 4) {
    const multiplier = w.shape[0]! / channels;
    const filter = tf.transpose(tf.reshape(w, [channels, multiplier, w.shape[2]!, w.shape[3]!]), [2, 3, 0, 1]);
    y = tf.fused.depthwiseConv2d({
      x: x as tf.Tensor4D,
      filter: filter as tf.Tensor4D,
      strides: view.strides as [number, number],
      // tfjs's kernels take explicit padding for depthwise convolutions too; its op's signature does not say so.
      pad: pad as 'valid',
      dataFormat: 'NHWC',
      dilations: dilations as [number, number],
      ...(bias ? { bias } : {}),
    });
  } else {
    const kernels = tf.split(w, group, 0);
    y = tf.concat(
      channelGroups(x, group).map((xg, g) => convolve(xg, kernels[g]!, view.strides, dilations, pad)),
      x.rank - 1,
    );
    if (bias) y = tf.add(y, bias);
  }
  return view.restore(toChannelsFirst(y));
}

const conv: OperatorImplementation = (call) => [convolution(call, call.input(0), call.input(1), call.optionalInput(2))];

/** Padding before and after each spatial axis of a ConvTranspose, and its output sizes. */
function transposedGeometry(call: OperatorCall, inputSizes: readonly number[], fullSizes: readonly number[], outputPadding: readonly number[], strides: readonly number[]) {
  const n = inputSizes.length;
  const autoPad = call.attrs.string('auto_pad', 'NOTSET');
  const outputShape = call.attrs.ints('output_shape');
  if (outputShape || autoPad === 'SAME_UPPER' || autoPad === 'SAME_LOWER') {
    const out = outputShape ? outputShape.slice(-n) : inputSizes.map((s, i) => s * strides[i]!);
    const total = out.map((o, i) => fullSizes[i]! + outputPadding[i]! - o);
    const half = total.map((t) => Math.floor(t / 2));
    const before = autoPad === 'SAME_UPPER' ? half : total.map((t, i) => t - half[i]!);
    return { before, out };
  }
  const pads = autoPad === 'VALID' ? new Array<number>(2 * n).fill(0) : call.attrs.ints('pads', new Array<number>(2 * n).fill(0));
  const before = pads.slice(0, n);
  return { before, out: fullSizes.map((f, i) => f + outputPadding[i]! - before[i]! - pads[n + i]!) };
}

/**
 * One group of a transposed convolution: channels-last input, [C, M, k...]
 * kernel, full (unpadded) output. 3-D runs as a convolution of the input
 * spread out by the strides with the flipped kernel (the wasm backend's 3-D
 * transposed convolution gives wrong results).
 */
function convolveTransposed(x: tf.Tensor, w: tf.Tensor, strides: number[], fullSizes: number[]): tf.Tensor {
  if (x.rank === 4) {
    const outShape = [x.shape[0]!, ...fullSizes, w.shape[1]!] as [number, number, number, number];
    return tf.conv2dTranspose(x as tf.Tensor4D, tf.transpose(w, [2, 3, 1, 0]) as tf.Tensor4D, outShape, strides as [number, number], 'valid');
  }
  const kernel = w.shape.slice(2);
  const spread = toChannelsLast(
    padSpatial(
      spreadOut(toChannelsFirst(x), strides),
      kernel.map((k) => k - 1),
      kernel.map((k) => k - 1),
      0,
    ),
  );
  const flipped = tf.transpose(tf.reverse(w, [2, 3, 4]), [1, 0, 2, 3, 4]);
  return convolve(spread, flipped, [1, 1, 1], [1, 1, 1]);
}

const convTranspose: OperatorImplementation = (call) => {
  const input = call.input(0);
  checkRank(call, input);
  const bias = call.optionalInput(2);
  const n = input.rank - 2;
  const group = call.attrs.int('group', 1);
  const strides = call.attrs.ints('strides', new Array<number>(n).fill(1));
  const dilations = call.attrs.ints('dilations', new Array<number>(n).fill(1));
  const outputPadding = call.attrs.ints('output_padding', new Array<number>(n).fill(0));
  const weights = spreadOut(call.input(1), dilations);
  const inputSizes = input.shape.slice(2);
  const fullSizes = inputSizes.map((s, i) => (s - 1) * strides[i]! + weights.shape[i + 2]!);
  const { before, out } = transposedGeometry(call, inputSizes, fullSizes, outputPadding, strides);
  const view = asAtLeast2d(input, weights, strides, dilations);
  const x = toChannelsLast(view.x);
  const full = n === 1 ? [1, ...fullSizes] : fullSizes;
  const kernels = group === 1 ? [view.w] : tf.split(view.w, group, 0);
  const groups = channelGroups(x, group).map((xg, g) => convolveTransposed(xg, kernels[g]!, view.strides, full));
  let y = view.restore(toChannelsFirst(groups.length === 1 ? groups[0]! : tf.concat(groups, x.rank - 1)));
  const grow = fullSizes.map((size, i) => Math.max(out[i]! + before[i]! - size, 0));
  y = padSpatial(
    y,
    grow.map(() => 0),
    grow,
    0,
  );
  y = tf.slice(y, [0, 0, ...before], [y.shape[0]!, y.shape[1]!, ...out]);
  if (bias) y = tf.add(y, tf.reshape(bias, [bias.size, ...new Array<number>(n).fill(1)]));
  return [y];
};

/** Convolution operators. */
export const CONVOLUTION_OPERATORS: OperatorFamily = {
  Conv: [{ since: 1, run: conv }],
  ConvTranspose: [{ since: 1, run: convTranspose }],
};
