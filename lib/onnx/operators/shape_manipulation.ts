/**
 * Operators that rearrange a tensor without computing new values: Reshape,
 * Flatten, Transpose, Squeeze, Unsqueeze, Expand, Tile, DepthToSpace,
 * SpaceToDepth and Identity. Shapes, axes and repeats given as inputs must be
 * known at import.
 */
import * as tf from '@tensorflow/tfjs';
import { hostNumbers } from '../proto/host_tensor.js';
import { OnnxError } from '../proto/onnx_errors.js';
import { normalizeAxes, normalizeAxis } from './axes.js';
import { broadcastShape } from './broadcast_shape.js';
import type { OperatorCall, OperatorFamily, OperatorImplementation } from './operator.js';

/** The target shape of a Reshape: 0 copies the input's dimension (unless allowzero), -1 is inferred. */
function reshapeTarget(call: OperatorCall, input: readonly number[], requested: readonly number[]): number[] {
  const allowZero = call.attrs.int('allowzero', 0) === 1;
  const shape = requested.map((d, i) => (d === 0 && !allowZero ? input[i]! : d));
  const inferred = shape.indexOf(-1);
  if (inferred >= 0) {
    const known = shape.reduce((p, d, i) => (i === inferred ? p : p * d), 1);
    const total = input.reduce((p, d) => p * d, 1);
    shape[inferred] = known === 0 ? 0 : total / known;
  }
  const total = input.reduce((p, d) => p * d, 1);
  if (shape.reduce((p, d) => p * d, 1) !== total || shape.some((d) => !Number.isInteger(d) || d < 0)) {
    throw new OnnxError(`${call.where}: cannot reshape [${input.join(', ')}] to [${requested.join(', ')}]`, { location: call.where });
  }
  return shape;
}

const reshape: OperatorImplementation = (call) => {
  const x = call.input(0);
  const requested = call.opset < 5 ? call.attrs.ints('shape', []) : hostNumbers(call.constantInput(1));
  return [tf.reshape(x, reshapeTarget(call, x.shape, requested))];
};

const flatten: OperatorImplementation = (call) => {
  const x = call.input(0);
  const axis = call.attrs.int('axis', 1);
  const split = axis === x.rank ? x.rank : normalizeAxis(axis, x.rank, call.where);
  const rows = x.shape.slice(0, split).reduce((p, d) => p * d, 1);
  return [tf.reshape(x, [rows, x.shape.slice(split).reduce((p, d) => p * d, 1)])];
};

const transpose: OperatorImplementation = (call) => {
  const x = call.input(0);
  const perm = call.attrs.ints('perm') ?? Array.from({ length: x.rank }, (_, i) => x.rank - 1 - i);
  return [tf.transpose(x, perm)];
};

function squeezeAxes(call: OperatorCall): number[] | undefined {
  if (call.opset < 13) return call.attrs.ints('axes');
  const axes = call.optionalConstantInput(1);
  return axes ? hostNumbers(axes) : undefined;
}

const squeeze: OperatorImplementation = (call) => {
  const x = call.input(0);
  const given = squeezeAxes(call);
  const axes = given ? normalizeAxes(given, x.rank, call.where) : x.shape.flatMap((d, i) => (d === 1 ? [i] : []));
  for (const a of axes) {
    if (x.shape[a] !== 1) throw new OnnxError(`${call.where}: cannot squeeze axis ${a} of size ${x.shape[a]}`, { location: call.where });
  }
  return [
    tf.reshape(
      x,
      x.shape.filter((_, i) => !axes.includes(i)),
    ),
  ];
};

const unsqueeze: OperatorImplementation = (call) => {
  const x = call.input(0);
  const given = call.opset < 13 ? call.attrs.ints('axes', []) : hostNumbers(call.constantInput(1));
  const rank = x.rank + given.length;
  const axes = new Set(normalizeAxes(given, rank, call.where));
  const shape: number[] = [];
  let next = 0;
  for (let i = 0; i < rank; i++) shape.push(axes.has(i) ? 1 : x.shape[next++]!);
  return [tf.reshape(x, shape)];
};

const expand: OperatorImplementation = (call) => {
  const x = call.input(0);
  const shape = broadcastShape(x.shape, hostNumbers(call.constantInput(1)), call.where);
  if (shape.length === x.rank && shape.every((d, i) => d === x.shape[i])) return [x];
  return [tf.broadcastTo(x, shape)];
};

const tile: OperatorImplementation = (call) => [tf.tile(call.input(0), hostNumbers(call.constantInput(1)))];

const depthToSpace: OperatorImplementation = (call) => {
  const x = call.input(0);
  const b = call.attrs.int('blocksize');
  const [n, c, h, w] = x.shape as [number, number, number, number];
  const crd = call.attrs.string('mode', 'DCR') === 'CRD';
  const split = crd ? tf.reshape(x, [n, c / (b * b), b, b, h, w]) : tf.reshape(x, [n, b, b, c / (b * b), h, w]);
  const moved = tf.transpose(split, crd ? [0, 1, 4, 2, 5, 3] : [0, 3, 4, 1, 5, 2]);
  return [tf.reshape(moved, [n, c / (b * b), h * b, w * b])];
};

const spaceToDepth: OperatorImplementation = (call) => {
  const x = call.input(0);
  const b = call.attrs.int('blocksize');
  const [n, c, h, w] = x.shape as [number, number, number, number];
  const split = tf.reshape(x, [n, c, h / b, b, w / b, b]);
  return [tf.reshape(tf.transpose(split, [0, 3, 5, 1, 2, 4]), [n, c * b * b, h / b, w / b])];
};

/** Shape manipulation operators. */
export const SHAPE_OPERATORS: OperatorFamily = {
  Reshape: [{ since: 1, run: reshape }],
  Flatten: [{ since: 1, run: flatten }],
  Transpose: [{ since: 1, run: transpose }],
  Squeeze: [{ since: 1, run: squeeze }],
  Unsqueeze: [{ since: 1, run: unsqueeze }],
  Expand: [{ since: 8, run: expand }],
  Tile: [{ since: 6, run: tile }],
  DepthToSpace: [{ since: 1, run: depthToSpace }],
  SpaceToDepth: [{ since: 1, run: spaceToDepth }],
  Identity: [{ since: 1, run: (call) => [call.input(0)] }],
};
