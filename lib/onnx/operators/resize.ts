/**
 * Resize (and the older Upsample): nearest, linear and cubic interpolation
 * along any axes, with every coordinate transformation mode and nearest
 * rounding mode of opset 11-17.
 *
 * Interpolation is separable: each resized axis is one gather per kernel tap
 * (indices and weights computed on the host from the sizes known at import)
 * and a weighted sum, as in the ONNX reference implementation.
 */
import * as tf from '@tensorflow/tfjs';
import { hostNumbers } from '../proto/host_tensor.js';
import { OnnxError } from '../proto/onnx_errors.js';
import type { OperatorCall, OperatorFamily, OperatorImplementation } from './operator.js';

interface ResizeMode {
  readonly mode: string;
  readonly coordinates: string;
  readonly nearest: string;
  readonly cubicA: number;
  readonly excludeOutside: boolean;
  readonly extrapolation: number;
}

/** The taps of one output position: input indices and their weights; `outside` when it lies outside the crop. */
interface Taps {
  indices: number[];
  weights: number[];
  outside: boolean;
}

/**
 * The input coordinate of output coordinate `x`. `outLength` is the input
 * size times the scale (not rounded), as the ONNX reference uses it.
 */
function originalCoordinate(mode: ResizeMode, x: number, scale: number, inSize: number, outLength: number, roiStart: number, roiEnd: number): number {
  switch (mode.coordinates) {
    case 'half_pixel':
      return (x + 0.5) / scale - 0.5;
    case 'pytorch_half_pixel':
      return outLength > 1 ? (x + 0.5) / scale - 0.5 : 0;
    case 'align_corners':
      return outLength === 1 ? 0 : (x * (inSize - 1)) / (outLength - 1);
    case 'asymmetric':
      return x / scale;
    case 'tf_half_pixel_for_nn':
      return (x + 0.5) / scale;
    case 'tf_crop_and_resize':
      return outLength > 1 ? roiStart * (inSize - 1) + (x * (roiEnd - roiStart) * (inSize - 1)) / (outLength - 1) : 0.5 * (roiStart + roiEnd) * (inSize - 1);
    default:
      throw new RangeError(`unknown coordinate_transformation_mode '${mode.coordinates}'`);
  }
}

function nearestIndex(mode: string, x: number): number {
  switch (mode) {
    case 'round_prefer_floor':
      return x === Math.floor(x) + 0.5 ? Math.floor(x) : Math.round(x);
    case 'round_prefer_ceil':
      return x === Math.floor(x) + 0.5 ? Math.ceil(x) : Math.round(x);
    case 'floor':
      return Math.floor(x);
    case 'ceil':
      return Math.ceil(x);
    default:
      throw new RangeError(`unknown nearest_mode '${mode}'`);
  }
}

function cubicWeights(r: number, a: number): number[] {
  const near = (t: number) => ((a + 2) * t - (a + 3)) * t * t + 1;
  const far = (t: number) => ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
  return [far(r + 1), near(r), near(1 - r), far(2 - r)];
}

function tapsAt(mode: ResizeMode, x: number, inSize: number): Taps {
  const clamp = (i: number) => Math.min(Math.max(i, 0), inSize - 1);
  const outside = mode.coordinates === 'tf_crop_and_resize' && (x < 0 || x > inSize - 1);
  if (mode.mode === 'nearest') return { indices: [clamp(nearestIndex(mode.nearest, x))], weights: [1], outside };
  const base = Math.floor(x);
  const r = x - base;
  if (mode.mode === 'linear') return { indices: [clamp(base), clamp(base + 1)], weights: [1 - r, r], outside };
  const raw = [base - 1, base, base + 1, base + 2];
  let weights = cubicWeights(r, mode.cubicA);
  if (mode.excludeOutside) {
    weights = weights.map((w, i) => (raw[i]! < 0 || raw[i]! >= inSize ? 0 : w));
    const total = weights.reduce((s, w) => s + w, 0);
    weights = weights.map((w) => w / total);
  }
  return { indices: raw.map(clamp), weights, outside };
}

/** Resizes `x` along `axis` from its size to `outSize`. */
function resizeAxis(x: tf.Tensor, axis: number, outSize: number, scale: number, mode: ResizeMode, roi: [number, number], outsideMasks: tf.Tensor[]): tf.Tensor {
  const inSize = x.shape[axis]!;
  const taps = Array.from({ length: outSize }, (_, j) => tapsAt(mode, originalCoordinate(mode, j, scale, inSize, inSize * scale, roi[0], roi[1]), inSize));
  const broadcastShape = x.shape.map((_, i) => (i === axis ? outSize : 1));
  if (taps.some((t) => t.outside))
    outsideMasks.push(
      tf.tensor(
        taps.map((t) => (t.outside ? 1 : 0)),
        broadcastShape,
        'bool',
      ),
    );
  const identity = inSize === outSize && taps.every((t, j) => t.weights.every((w, k) => (t.indices[k] === j ? w === 1 : w === 0)));
  if (identity) return x;
  let result: tf.Tensor | undefined;
  for (let k = 0; k < taps[0]!.indices.length; k++) {
    const gathered = tf.gather(
      x,
      tf.tensor1d(
        taps.map((t) => t.indices[k]!),
        'int32',
      ),
      axis,
    );
    const weights = taps.map((t) => t.weights[k]!);
    const term = weights.every((w) => w === 1) ? gathered : tf.mul(gathered, tf.tensor(weights, broadcastShape, 'float32'));
    result = result ? tf.add(result, term) : term;
  }
  return result!;
}

/** Output sizes and per-axis scales from `sizes` or `scales`. */
function targetSizes(call: OperatorCall, shape: readonly number[], scales: number[] | undefined, sizes: number[] | undefined): { out: number[]; scale: number[] } {
  if (sizes && sizes.length > 0) {
    if (sizes.length !== shape.length) throw new OnnxError(`${call.where}: ${sizes.length} sizes for a tensor of rank ${shape.length}`, { location: call.where });
    return { out: sizes, scale: sizes.map((s, i) => s / shape[i]!) };
  }
  if (!scales || scales.length !== shape.length) throw new OnnxError(`${call.where}: needs one scale per axis (rank ${shape.length}) or sizes`, { location: call.where });
  return { out: shape.map((d, i) => Math.floor(d * scales[i]!)), scale: scales };
}

function resizeWith(call: OperatorCall, mode: ResizeMode, scales: number[] | undefined, sizes: number[] | undefined, roi: number[] | undefined): tf.Tensor {
  const x = call.input(0);
  if (!['nearest', 'linear', 'cubic'].includes(mode.mode)) throw new OnnxError(`${call.where}: resize mode '${mode.mode}' is not supported`, { location: call.where });
  const { out, scale } = targetSizes(call, x.shape, scales, sizes);
  const outsideMasks: tf.Tensor[] = [];
  let y = x.dtype === 'float32' ? x : tf.cast(x, 'float32');
  out.forEach((size, axis) => {
    const range: [number, number] = roi && roi.length === 2 * x.rank ? [roi[axis]!, roi[axis + x.rank]!] : [0, 1];
    y = resizeAxis(y, axis, size, scale[axis]!, mode, range, outsideMasks);
  });
  if (outsideMasks.length > 0)
    y = tf.where(
      outsideMasks.reduce((a, b) => tf.logicalOr(a, b)),
      tf.fill(y.shape, mode.extrapolation),
      y,
    );
  return x.dtype === 'float32' ? y : tf.cast(y, x.dtype);
}

function modeOf(call: OperatorCall, legacy: boolean): ResizeMode {
  const mode = call.attrs.string('mode', 'nearest');
  return {
    mode: mode === 'bilinear' ? 'linear' : mode,
    coordinates: legacy ? 'asymmetric' : call.attrs.string('coordinate_transformation_mode', 'half_pixel'),
    nearest: legacy ? 'floor' : call.attrs.string('nearest_mode', 'round_prefer_floor'),
    cubicA: call.attrs.float('cubic_coeff_a', -0.75),
    excludeOutside: call.attrs.int('exclude_outside', 0) === 1,
    extrapolation: call.attrs.float('extrapolation_value', 0),
  };
}

const numbersOf = (call: OperatorCall, i: number) => {
  const t = call.optionalConstantInput(i);
  return t ? hostNumbers(t) : undefined;
};

/** Resize from opset 11: inputs X, roi, scales, sizes. */
const resize: OperatorImplementation = (call) => [resizeWith(call, modeOf(call, false), numbersOf(call, 2), numbersOf(call, 3), numbersOf(call, 1))];

/** Resize-10 and Upsample-9: inputs X, scales; asymmetric coordinates, nearest rounds down. */
const scalesInput: OperatorImplementation = (call) => [resizeWith(call, modeOf(call, true), numbersOf(call, 1), undefined, undefined)];

/** Upsample-7: scales attribute. */
const scalesAttribute: OperatorImplementation = (call) => [resizeWith(call, modeOf(call, true), call.attrs.floats('scales'), undefined, undefined)];

/** Resize operators. */
export const RESIZE_OPERATORS: OperatorFamily = {
  Resize: [
    { since: 10, run: scalesInput },
    { since: 11, run: resize },
  ],
  Upsample: [
    { since: 7, run: scalesAttribute },
    { since: 9, run: scalesInput },
  ],
};
