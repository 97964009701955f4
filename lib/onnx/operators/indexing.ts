/**
 * Indexing and selection: Gather, GatherElements, GatherND, ScatterElements
 * (and its old name Scatter), ScatterND, OneHot, Trilu, TopK, and the
 * operators whose output shape depends on values, which must then be known at
 * import: Compress (its condition), ReverseSequence (its lengths) and NonZero
 * (its input). Negative indices count from the end of their axis.
 */
import * as tf from '@tensorflow/tfjs';
import { hostNumbers, hostTensor } from '../proto/host_tensor.js';
import { OnnxElementType } from '../proto/onnx_element_type.js';
import { OnnxError } from '../proto/onnx_errors.js';
import { normalizeAxis } from './axes.js';
import { elementCoordinates } from './element_coordinates.js';
import { oneHotMask } from './one_hot_mask.js';
import type { ImportTimeImplementation, OperatorCall, OperatorFamily, OperatorImplementation } from './operator.js';

/** Input `index` as int32 indices into an axis of size `dim`, negative ones wrapped (on the host when the input is fixed). */
function indicesInput(call: OperatorCall, index: number, dim: number): tf.Tensor {
  const fixed = call.fixedInput(index);
  if (fixed)
    return tf.tensor(
      hostNumbers(fixed).map((i) => (i < 0 ? i + dim : i)),
      [...fixed.shape],
      'int32',
    );
  const raw = call.input(index);
  const indices = raw.dtype === 'int32' ? raw : tf.cast(raw, 'int32');
  return tf.where(tf.less(indices, 0), tf.add(indices, tf.scalar(dim, 'int32')), indices);
}

const gather: OperatorImplementation = (call) => {
  const data = call.input(0);
  const axis = normalizeAxis(call.attrs.int('axis', 0), data.rank, call.where);
  return [tf.gather(data, indicesInput(call, 1, data.shape[axis]!), axis)];
};

const gatherElements: OperatorImplementation = (call) => {
  const data = call.input(0);
  const axis = normalizeAxis(call.attrs.int('axis', 0), data.rank, call.where);
  const indices = indicesInput(call, 1, data.shape[axis]!);
  return [tf.gatherND(data, elementCoordinates(indices.shape, axis, indices))];
};

const gatherND: OperatorImplementation = (call) => {
  const data = call.input(0);
  const raw = call.input(1);
  const indices = raw.dtype === 'int32' ? raw : tf.cast(raw, 'int32');
  const batchDims = call.attrs.int('batch_dims', 0);
  if (batchDims === 0) return [tf.gatherND(data, indices)];
  const batchShape = data.shape.slice(0, batchDims);
  const batch = batchShape.reduce((p, d) => p * d, 1);
  const flatData = tf.reshape(data, [batch, ...data.shape.slice(batchDims)]);
  const inner = indices.shape.slice(batchDims, -1);
  const flatIndices = tf.reshape(indices, [batch, ...inner, indices.shape[indices.rank - 1]!]);
  const innerSize = inner.reduce((p, d) => p * d, 1);
  const batchIndex = tf.tensor(
    Int32Array.from({ length: batch * innerSize }, (_, i) => Math.floor(i / innerSize)),
    [batch, ...inner, 1],
    'int32',
  );
  const gathered = tf.gatherND(flatData, tf.concat([batchIndex, flatIndices], -1));
  return [tf.reshape(gathered, [...batchShape, ...gathered.shape.slice(1)])];
};

/** Writes `updates` at `coordinates` of `data`: replacing, or adding with reduction 'add'. */
function scatter(call: OperatorCall, data: tf.Tensor, coordinates: tf.Tensor, updates: tf.Tensor): tf.Tensor {
  const reduction = call.attrs.string('reduction', 'none');
  if (reduction === 'none') return tf.tensorScatterUpdate(data, coordinates, updates);
  if (reduction === 'add') return tf.add(data, tf.scatterND(coordinates, updates, data.shape));
  throw new OnnxError(`${call.where}: scatter reduction '${reduction}' is not supported`, { location: call.where });
}

const scatterElements: OperatorImplementation = (call) => {
  const data = call.input(0);
  const axis = normalizeAxis(call.attrs.int('axis', 0), data.rank, call.where);
  const indices = indicesInput(call, 1, data.shape[axis]!);
  const coordinates = tf.reshape(elementCoordinates(indices.shape, axis, indices), [indices.size, data.rank]);
  return [scatter(call, data, coordinates, tf.reshape(call.input(2), [indices.size]))];
};

const scatterND: OperatorImplementation = (call) => {
  const raw = call.input(1);
  return [scatter(call, call.input(0), raw.dtype === 'int32' ? raw : tf.cast(raw, 'int32'), call.input(2))];
};

const oneHot: OperatorImplementation = (call) => {
  const depth = hostNumbers(call.constantInput(1))[0]!;
  const [off, on] = hostNumbers(call.constantInput(2)) as [number, number];
  const dtype = call.inputDtype(2);
  const hot = tf.where(oneHotMask(indicesInput(call, 0, depth), depth), tf.scalar(on, dtype), tf.scalar(off, dtype));
  const axis = normalizeAxis(call.attrs.int('axis', -1), hot.rank, call.where);
  if (axis === hot.rank - 1) return [hot];
  const perm = Array.from({ length: hot.rank }, (_, i) => (i < axis ? i : i === axis ? hot.rank - 1 : i - 1));
  return [tf.transpose(hot, perm)];
};

const trilu: OperatorImplementation = (call) => {
  const x = call.input(0);
  const k = call.hasInput(1) ? hostNumbers(call.constantInput(1))[0]! : 0;
  const upper = call.attrs.int('upper', 1) === 1;
  const [rows, cols] = x.shape.slice(-2) as [number, number];
  const mask = Uint8Array.from({ length: rows * cols }, (_, i) => {
    const offset = (i % cols) - Math.floor(i / cols);
    return (upper ? offset >= k : offset <= k) ? 1 : 0;
  });
  return [tf.where(tf.tensor(mask, [rows, cols], 'bool'), x, tf.zerosLike(x))];
};

const topK: OperatorImplementation = (call) => {
  const x = call.input(0);
  const k = call.opset < 10 ? call.attrs.int('k') : hostNumbers(call.constantInput(1))[0]!;
  const axis = normalizeAxis(call.attrs.int('axis', -1), x.rank, call.where);
  const largest = call.attrs.int('largest', 1) === 1;
  const sorted = call.attrs.int('sorted', 1) === 1;
  const perm = Array.from({ length: x.rank }, (_, i) => (i === axis ? x.rank - 1 : i === x.rank - 1 ? axis : i));
  const moved = axis === x.rank - 1 ? x : tf.transpose(x, perm);
  const { values, indices } = tf.topk(largest ? moved : tf.neg(moved), k, sorted);
  const signed = largest ? values : tf.neg(values);
  return axis === x.rank - 1 ? [signed, indices] : [tf.transpose(signed, perm), tf.transpose(indices, perm)];
};

const compress: OperatorImplementation = (call) => {
  let x = call.input(0);
  const condition = hostNumbers(call.constantInput(1));
  let axis = 0;
  if (call.attrs.has('axis')) axis = normalizeAxis(call.attrs.int('axis'), x.rank, call.where);
  else x = tf.reshape(x, [x.size]);
  const kept = condition.slice(0, x.shape[axis]).flatMap((c, i) => (c ? [i] : []));
  return [tf.gather(x, tf.tensor1d(kept, 'int32'), axis)];
};

const reverseSequence: OperatorImplementation = (call) => {
  const x = call.input(0);
  const lengths = hostNumbers(call.constantInput(1));
  const batchAxis = call.attrs.int('batch_axis', 1);
  const timeAxis = call.attrs.int('time_axis', 0);
  const strides = x.shape.map((_, d) => x.shape.slice(d + 1).reduce((p, s) => p * s, 1));
  const indices = Int32Array.from({ length: x.size }, (_, i) => {
    const t = Math.floor(i / strides[timeAxis]!) % x.shape[timeAxis]!;
    const length = lengths[Math.floor(i / strides[batchAxis]!) % x.shape[batchAxis]!]!;
    return t < length ? length - 1 - t : t;
  });
  return [tf.gatherND(x, elementCoordinates(x.shape, timeAxis, tf.tensor(indices, x.shape, 'int32')))];
};

const nonZero: ImportTimeImplementation = (call) => {
  const x = call.constantInput(0);
  const values = hostNumbers(x);
  const strides = x.shape.map((_, d) => x.shape.slice(d + 1).reduce((p, s) => p * s, 1));
  const positions = values.flatMap((v, i) => (v !== 0 ? [i] : []));
  const coordinates = x.shape.flatMap((dim, d) => positions.map((i) => Math.floor(i / strides[d]!) % dim));
  return [hostTensor(OnnxElementType.INT64, [x.shape.length, positions.length], coordinates)];
};

/** Indexing and selection operators. */
export const INDEXING_OPERATORS: OperatorFamily = {
  Gather: [{ since: 1, run: gather }],
  GatherElements: [{ since: 11, run: gatherElements }],
  GatherND: [{ since: 11, run: gatherND }],
  Scatter: [{ since: 9, run: scatterElements }],
  ScatterElements: [{ since: 11, run: scatterElements }],
  ScatterND: [{ since: 11, run: scatterND }],
  OneHot: [{ since: 9, run: oneHot }],
  Trilu: [{ since: 14, run: trilu }],
  TopK: [{ since: 1, run: topK }],
  Compress: [{ since: 9, run: compress }],
  ReverseSequence: [{ since: 10, run: reverseSequence }],
  NonZero: [{ since: 9, atImport: nonZero }],
};
