/**
 * Operators that make tensors or change their element type: Constant,
 * ConstantOfShape, Range, EyeLike, Shape and Size (computed at import, from
 * attributes, shapes and constant inputs), and Cast, CastLike.
 */
import * as tf from '@tensorflow/tfjs';
import { emptyHostData, hostNumbers, hostTensor } from '../proto/host_tensor.js';
import { OnnxElementType, elementTypeName, elementTypeOfDtype, tfjsDtypeOf } from '../proto/onnx_element_type.js';
import { OnnxError } from '../proto/onnx_errors.js';
import type { ImportTimeImplementation, OperatorCall, OperatorFamily, OperatorImplementation } from './operator.js';

const constant: ImportTimeImplementation = (call) => {
  const { attrs } = call;
  const tensor = attrs.tensor('value');
  if (tensor) return [tensor];
  if (attrs.has('value_float')) return [hostTensor(OnnxElementType.FLOAT, [], [attrs.float('value_float')])];
  if (attrs.has('value_floats')) {
    const values = attrs.floats('value_floats', []);
    return [hostTensor(OnnxElementType.FLOAT, [values.length], values)];
  }
  if (attrs.has('value_int')) return [hostTensor(OnnxElementType.INT64, [], [attrs.int('value_int')])];
  if (attrs.has('value_ints')) {
    const values = attrs.ints('value_ints', []);
    return [hostTensor(OnnxElementType.INT64, [values.length], values)];
  }
  if (attrs.has('value_string')) return [hostTensor(OnnxElementType.STRING, [], [attrs.string('value_string')])];
  if (attrs.has('value_strings')) {
    const values = attrs.strings('value_strings') ?? [];
    return [hostTensor(OnnxElementType.STRING, [values.length], values)];
  }
  throw new OnnxError(`${call.where}: no supported value attribute (sparse_value is not supported)`, { location: call.where });
};

const constantOfShape: ImportTimeImplementation = (call) => {
  const shape = hostNumbers(call.constantInput(0));
  const value = call.attrs.tensor('value') ?? hostTensor(OnnxElementType.FLOAT, [1], [0]);
  const data = emptyHostData(
    value.elementType,
    shape.reduce((p, d) => p * d, 1),
  );
  if (Array.isArray(data)) data.fill((value.data as string[])[0]!);
  else data.fill((value.data as Float64Array)[0]!);
  return [{ elementType: value.elementType, shape, data }];
};

const range: ImportTimeImplementation = (call) => {
  const start = call.constantInput(0);
  const [first, limit, delta] = [start, call.constantInput(1), call.constantInput(2)].map((t) => hostNumbers(t)[0]!) as [number, number, number];
  const count = Math.max(Math.ceil((limit - first) / delta), 0);
  return [
    hostTensor(
      start.elementType,
      [count],
      Array.from({ length: count }, (_, i) => first + i * delta),
    ),
  ];
};

const eyeLike: ImportTimeImplementation = (call) => {
  const [rows, cols] = call.inputShape(0) as [number, number];
  const k = call.attrs.int('k', 0);
  const elementType = call.attrs.int('dtype', elementTypeOfDtype(call.inputDtype(0)));
  const data = emptyHostData(elementType, rows * cols) as Float64Array;
  for (let r = 0; r < rows; r++) if (r + k >= 0 && r + k < cols) data[r * cols + r + k] = 1;
  return [{ elementType, shape: [rows, cols], data }];
};

function clampedSliceIndex(index: number, rank: number): number {
  const i = index < 0 ? index + rank : index;
  return Math.min(Math.max(i, 0), rank);
}

const shape: ImportTimeImplementation = (call) => {
  const dims = call.inputShape(0);
  const start = clampedSliceIndex(call.attrs.int('start', 0), dims.length);
  const end = call.attrs.has('end') ? clampedSliceIndex(call.attrs.int('end'), dims.length) : dims.length;
  const kept = dims.slice(start, Math.max(start, end));
  return [hostTensor(OnnxElementType.INT64, [kept.length], kept)];
};

const size: ImportTimeImplementation = (call) => [hostTensor(OnnxElementType.INT64, [], [call.inputShape(0).reduce((p, d) => p * d, 1)])];

function castTo(call: OperatorCall, x: tf.Tensor, elementType: number): tf.Tensor {
  const dtype = tfjsDtypeOf(elementType);
  if (dtype === undefined || dtype === 'string' || x.dtype === 'string') {
    throw new OnnxError(`${call.where}: casting ${x.dtype} to ${elementTypeName(elementType)} is not supported`, { location: call.where });
  }
  // A cast to FLOAT16 of what is not FLOAT16 is a node of its own, whose output the device rounds to float16.
  const toHalf = elementType === OnnxElementType.FLOAT16 && call.inputElementType(0) !== OnnxElementType.FLOAT16;
  return x.dtype === dtype && !toHalf ? x : tf.cast(x, dtype);
}

/** The `to` attribute of a Cast: an element type code, or (before opset 6) its name. */
export function castTarget(call: OperatorCall): number {
  if (call.opset >= 6) return call.attrs.int('to');
  const name = call.attrs.string('to');
  const code = (OnnxElementType as Record<string, number>)[name.toUpperCase()];
  if (code === undefined) throw new OnnxError(`${call.where}: unknown element type '${name}'`, { location: call.where });
  return code;
}

const cast: OperatorImplementation = (call) => [castTo(call, call.input(0), castTarget(call))];

const castLike: OperatorImplementation = (call) => [castTo(call, call.input(0), elementTypeOfDtype(call.inputDtype(1)))];

/** Tensor creation and conversion operators. */
export const TENSOR_CREATION_OPERATORS: OperatorFamily = {
  Constant: [{ since: 1, atImport: constant }],
  ConstantOfShape: [{ since: 9, atImport: constantOfShape }],
  Range: [{ since: 11, atImport: range }],
  EyeLike: [{ since: 9, atImport: eyeLike }],
  Shape: [{ since: 1, atImport: shape }],
  Size: [{ since: 1, atImport: size }],
  Cast: [{ since: 1, run: cast }],
  CastLike: [{ since: 15, run: castLike }],
};
