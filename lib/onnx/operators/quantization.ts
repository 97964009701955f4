/**
 * Linear quantization: QuantizeLinear, DequantizeLinear,
 * DynamicQuantizeLinear, and the integer and quantized products MatMulInteger,
 * ConvInteger, QLinearMatMul and QLinearConv.
 *
 * Quantized values (UINT8 or INT8, as the zero point's type says; UINT8 when
 * there is none) are held in int32 tensors; products are computed in float32,
 * exact for 8-bit operands of the sizes models use.
 */
import * as tf from '@tensorflow/tfjs';
import { OnnxElementType } from '../proto/onnx_element_type.js';
import { normalizeAxis } from './axes.js';
import { convolution } from './convolution.js';
import { numpyMatMul } from './matrix.js';
import type { OperatorCall, OperatorFamily, OperatorImplementation } from './operator.js';

/** The range of the quantized type of zero point input `index`. */
function quantizedRange(call: OperatorCall, index: number): [number, number] {
  return call.inputElementType(index) === OnnxElementType.INT8 ? [-128, 127] : [0, 255];
}

function asFloat(t: tf.Tensor): tf.Tensor {
  return t.dtype === 'float32' ? t : tf.cast(t, 'float32');
}

/** A scale or zero point: a scalar, or a vector along `axis` (normalized by `normalize`) of a tensor of rank `rank`. */
function alongAxis(t: tf.Tensor, axis: number, rank: number, normalize: (axis: number) => number = (a) => a): tf.Tensor {
  if (t.size === 1 || rank === 0) return tf.reshape(t, []);
  return tf.reshape(t, [t.size, ...new Array<number>(rank - normalize(axis) - 1).fill(1)]);
}

/** `saturate(round(x / scale) + zeroPoint)` as int32. */
function quantize(x: tf.Tensor, scale: tf.Tensor, zeroPoint: tf.Tensor | undefined, [low, high]: [number, number]): tf.Tensor {
  let q = tf.round(tf.div(asFloat(x), scale));
  if (zeroPoint) q = tf.add(q, asFloat(zeroPoint));
  return tf.cast(tf.clipByValue(q, low, high), 'int32');
}

/** `(x - zeroPoint) * scale`. */
function dequantize(x: tf.Tensor, scale: tf.Tensor, zeroPoint: tf.Tensor | undefined): tf.Tensor {
  const shifted = zeroPoint ? tf.sub(asFloat(x), asFloat(zeroPoint)) : asFloat(x);
  return tf.mul(shifted, scale);
}

/** Scale and zero point (inputs 1 and 2) shaped along the `axis` attribute (opset 13) of `x`. */
function scaleAndZeroPoint(call: OperatorCall, x: tf.Tensor): [tf.Tensor, tf.Tensor | undefined] {
  const axis = call.opset < 13 ? 1 : call.attrs.int('axis', 1);
  const normalize = (a: number) => normalizeAxis(a, x.rank, call.where);
  const zeroPoint = call.optionalInput(2);
  return [alongAxis(call.input(1), axis, x.rank, normalize), zeroPoint && alongAxis(zeroPoint, axis, x.rank, normalize)];
}

const quantizeLinear: OperatorImplementation = (call) => {
  const x = call.input(0);
  const [scale, zeroPoint] = scaleAndZeroPoint(call, x);
  return [quantize(x, scale, zeroPoint, quantizedRange(call, 2))];
};

const dequantizeLinear: OperatorImplementation = (call) => {
  const x = call.input(0);
  const [scale, zeroPoint] = scaleAndZeroPoint(call, x);
  return [dequantize(x, scale, zeroPoint)];
};

const dynamicQuantizeLinear: OperatorImplementation = (call) => {
  const x = call.input(0);
  const low = tf.minimum(tf.min(x), 0);
  const high = tf.maximum(tf.max(x), 0);
  const scale = tf.div(tf.sub(high, low), 255);
  const zeroPoint = tf.clipByValue(tf.round(tf.neg(tf.div(low, scale))), 0, 255);
  return [quantize(x, scale, zeroPoint, [0, 255]), scale, tf.cast(zeroPoint, 'int32')];
};

/** Input `index` minus the zero point at `zeroIndex` (a scalar, or per row for `rowwise` matrices), in float32. */
function centered(call: OperatorCall, index: number, zeroIndex: number, rowwise: boolean): tf.Tensor {
  const x = asFloat(call.input(index));
  const zeroPoint = call.optionalInput(zeroIndex);
  if (!zeroPoint) return x;
  const shaped = rowwise && zeroPoint.size > 1 ? tf.reshape(zeroPoint, [zeroPoint.size, 1]) : zeroPoint;
  return tf.sub(x, asFloat(shaped));
}

const matMulInteger: OperatorImplementation = (call) => [tf.cast(numpyMatMul(centered(call, 0, 2, true), centered(call, 1, 3, false), call.where), 'int32')];

const convInteger: OperatorImplementation = (call) => {
  const x = centered(call, 0, 2, false);
  const wZero = call.optionalInput(3);
  const w = asFloat(call.input(1));
  const weights = wZero ? tf.sub(w, alongAxis(asFloat(wZero), 0, w.rank)) : w;
  return [tf.cast(tf.round(convolution(call, x, weights, undefined)), 'int32')];
};

const qLinearMatMul: OperatorImplementation = (call) => {
  const a = dequantize(call.input(0), call.input(1), call.input(2));
  const b = dequantize(call.input(3), call.input(4), call.input(5));
  return [quantize(numpyMatMul(a, b, call.where), call.input(6), call.input(7), quantizedRange(call, 7))];
};

const qLinearConv: OperatorImplementation = (call) => {
  const x = dequantize(call.input(0), call.input(1), call.input(2));
  const w = call.input(3);
  const wScale = alongAxis(call.input(4), 0, w.rank);
  const weights = dequantize(w, wScale, alongAxis(call.input(5), 0, w.rank));
  const bias = call.optionalInput(8);
  const scaledBias = bias && tf.mul(asFloat(bias), tf.mul(call.input(1), tf.reshape(call.input(4), [-1])));
  return [quantize(convolution(call, x, weights, scaledBias), call.input(6), call.input(7), quantizedRange(call, 7))];
};

/** Quantization operators. */
export const QUANTIZATION_OPERATORS: OperatorFamily = {
  QuantizeLinear: [{ since: 10, run: quantizeLinear }],
  DequantizeLinear: [{ since: 10, run: dequantizeLinear }],
  DynamicQuantizeLinear: [{ since: 11, run: dynamicQuantizeLinear }],
  MatMulInteger: [{ since: 10, run: matMulInteger }],
  ConvInteger: [{ since: 10, run: convInteger }],
  QLinearMatMul: [{ since: 10, run: qLinearMatMul }],
  QLinearConv: [{ since: 10, run: qLinearConv }],
};
