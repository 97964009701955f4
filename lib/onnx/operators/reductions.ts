/**
 * Reductions along axes: ReduceSum, ReduceMean, ReduceMax, ReduceMin,
 * ReduceProd, ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp,
 * ReduceSumSquare; ArgMax and ArgMin; and the running sum CumSum.
 *
 * Axes come from the `axes` attribute, or for ReduceSum from opset 13 from
 * an input that must be known at import; no axes means all axes (or, with
 * `noop_with_empty_axes`, no reduction).
 */
import * as tf from '@tensorflow/tfjs';
import { hostNumbers } from '../proto/host_tensor.js';
import { allAxes, normalizeAxes, normalizeAxis } from './axes.js';
import type { OperatorCall, OperatorFamily, OperatorImplementation, OperatorVersion } from './operator.js';

type Reducer = (x: tf.Tensor, axes: number[], keepDims: boolean) => tf.Tensor;

function reduction(reducer: Reducer, axesFromInput: boolean): OperatorImplementation {
  return (call: OperatorCall) => {
    const x = call.input(0);
    const keepDims = call.attrs.int('keepdims', 1) === 1;
    const given = axesFromInput ? call.optionalConstantInput(1) : undefined;
    const axes = axesFromInput ? (given ? hostNumbers(given) : []) : call.attrs.ints('axes', []);
    if (axes.length === 0 && call.attrs.int('noop_with_empty_axes', 0) === 1) return [x];
    const normalized = axes.length === 0 ? allAxes(x.rank) : normalizeAxes(axes, x.rank, call.where);
    return [reducer(x, normalized, keepDims)];
  };
}

function attributeAxes(reducer: Reducer): OperatorVersion[] {
  return [{ since: 1, run: reduction(reducer, false) }];
}

const square = (x: tf.Tensor) => tf.mul(x, x);

function argExtreme(pick: (x: tf.Tensor, axis: number) => tf.Tensor): OperatorImplementation {
  return (call) => {
    const x = call.input(0);
    const axis = normalizeAxis(call.attrs.int('axis', 0), x.rank, call.where);
    const last = call.attrs.int('select_last_index', 0) === 1;
    let index = last ? tf.sub(tf.scalar(x.shape[axis]! - 1, 'int32'), pick(tf.reverse(x, axis), axis)) : pick(x, axis);
    if (call.attrs.int('keepdims', 1) === 1) index = tf.expandDims(index, axis);
    return [index];
  };
}

const cumSum: OperatorImplementation = (call) => {
  const x = call.input(0);
  const axis = normalizeAxis(hostNumbers(call.constantInput(1))[0]!, x.rank, call.where);
  return [tf.cumsum(x, axis, call.attrs.int('exclusive', 0) === 1, call.attrs.int('reverse', 0) === 1)];
};

/** Reduction operators. */
export const REDUCTION_OPERATORS: OperatorFamily = {
  ReduceSum: [
    { since: 1, run: reduction(tf.sum, false) },
    { since: 13, run: reduction(tf.sum, true) },
  ],
  ReduceMean: attributeAxes(tf.mean),
  ReduceMax: attributeAxes(tf.max),
  ReduceMin: attributeAxes(tf.min),
  ReduceProd: attributeAxes(tf.prod),
  ReduceL1: attributeAxes((x, axes, keep) => tf.sum(tf.abs(x), axes, keep)),
  ReduceL2: attributeAxes((x, axes, keep) => tf.sqrt(tf.sum(square(x), axes, keep))),
  ReduceLogSum: attributeAxes((x, axes, keep) => tf.log(tf.sum(x, axes, keep))),
  ReduceLogSumExp: attributeAxes(tf.logSumExp),
  ReduceSumSquare: attributeAxes((x, axes, keep) => tf.sum(square(x), axes, keep)),
  ArgMax: [{ since: 1, run: argExtreme(tf.argMax) }],
  ArgMin: [{ since: 1, run: argExtreme(tf.argMin) }],
  CumSum: [{ since: 11, run: cumSum }],
};
