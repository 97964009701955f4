/**
 * Shape rules of reductions and scans: the reduced axes go (or become 1 with
 * `keepDims`), computed with tfjs's `parseAxisParam`,
 * `computeOutAndReduceShapes` and `expandShapeToKeepDim`.
 */
import * as tf from '@tensorflow/tfjs';
import { output, type KernelCall, type KernelShapeRule } from '../rules/kernel_shape_rule.js';

/** The shape of `x` reduced over `axis` (negative axes count from the end). */
function reducedShape(x: tf.TensorInfo, axis: number | number[], keepDims: boolean): number[] {
  const axes = tf.util.parseAxisParam(axis, [...x.shape]);
  const [outShape] = tf.backend_util.computeOutAndReduceShapes([...x.shape], axes);
  return keepDims ? tf.backend_util.expandShapeToKeepDim(outShape, axes) : outShape;
}

/** A reduction whose axes are in attribute `axisAttr` and whose dtype `dtypeOf` gives from the input's. */
function reduction(axisAttr: 'axis' | 'reductionIndices', dtypeOf: (dtype: tf.DataType) => tf.DataType): KernelShapeRule {
  return (call: KernelCall) => {
    const x = call.input('x');
    const axis = call.attrs[axisAttr] as number | number[];
    return output(reducedShape(x, axis, call.attrs.keepDims === true), dtypeOf(x.dtype));
  };
}

/** An arg-reduction (`ArgMax`, `ArgMin`) over one axis: int32 indices. */
const argReduction: KernelShapeRule = (call) => output(reducedShape(call.input('x'), call.attrsAs<tf.ArgMaxAttrs>().axis, false), 'int32');

/** A scan (`Cumsum`, `Cumprod`): the input's shape, its dtype widened to int32 for bool. */
const scan: KernelShapeRule = (call) => {
  const x = call.input('x');
  return output(x.shape, tf.upcastType(x.dtype, 'int32'));
};

const sameDtype = (dtype: tf.DataType): tf.DataType => dtype;
const sumDtype = (dtype: tf.DataType): tf.DataType => tf.upcastType(dtype, 'int32');

/** The reductions and scans, by kernel name. */
export const REDUCTION_RULES: Readonly<Record<string, KernelShapeRule>> = {
  Sum: reduction('axis', sumDtype),
  Prod: reduction('axis', sumDtype),
  Mean: reduction('axis', () => 'float32'),
  Max: reduction('reductionIndices', sameDtype),
  Min: reduction('axis', sameDtype),
  All: reduction('axis', sameDtype),
  Any: reduction('axis', sameDtype),
  ArgMax: argReduction,
  ArgMin: argReduction,
  Cumsum: scan,
  Cumprod: scan,
};
