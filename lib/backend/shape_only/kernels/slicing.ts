/**
 * Shape rules of slicing, splitting, joining and stacking, computed with
 * tfjs's `slice_util` (`parseSliceParams`, `sliceInfo`), `prepareSplitSize`
 * and `concat_util` (`assertParamsConsistent`, `computeOutShape`).
 */
import * as tf from '@tensorflow/tfjs';
import { output, type KernelShapeRule } from '../rules/kernel_shape_rule.js';

/** The joining and splitting kernels, by kernel name. */
export const SLICING_RULES: Readonly<Record<string, KernelShapeRule>> = {
  /** `size` (with -1 meaning "to the end"), checked against x. */
  Slice: (call) => {
    const x = call.input('x');
    const { begin, size } = call.attrsAs<tf.SliceAttrs>();
    const [parsedBegin, parsedSize] = tf.slice_util.parseSliceParams(x as tf.Tensor, begin, size);
    tf.slice_util.assertParamsValid(x as tf.Tensor, parsedBegin, parsedSize);
    return output(parsedSize, x.dtype);
  },
  /** The final shape of tfjs's strided-slice analysis (masks, ellipsis, new and shrunk axes). */
  StridedSlice: (call) => {
    const x = call.input('x');
    const { begin, end, strides, beginMask, endMask, ellipsisMask, newAxisMask, shrinkAxisMask } = call.attrsAs<tf.StridedSliceAttrs>();
    const { finalShape } = tf.slice_util.sliceInfo([...x.shape], begin, end, strides, beginMask, endMask, ellipsisMask, newAxisMask, shrinkAxisMask);
    return output(finalShape, x.dtype);
  },
  /** One output per split, along `axis`. */
  SplitV: (call) => {
    const x = call.input('x');
    const { numOrSizeSplits, axis } = call.attrsAs<tf.SplitVAttrs>();
    const parsedAxis = tf.util.parseAxisParam(axis, [...x.shape])[0]!;
    const sizes = Array.isArray(numOrSizeSplits) ? [...numOrSizeSplits] : numOrSizeSplits;
    return tf.backend_util.prepareSplitSize(x as tf.Tensor, sizes, parsedAxis).map((size) => {
      const shape = [...x.shape];
      shape[parsedAxis] = size;
      return output(shape, x.dtype);
    });
  },
  /** One output per index of `axis`, without that axis. */
  Unpack: (call) => {
    const value = call.input('value');
    const { axis } = call.attrsAs<tf.UnpackAttrs>();
    const parsedAxis = axis < 0 ? axis + value.shape.length : axis;
    const shape = value.shape.filter((_, i) => i !== parsedAxis);
    return Array.from({ length: value.shape[parsedAxis]! }, () => output(shape, value.dtype));
  },
  Concat: (call) => {
    const inputs = call.inputList();
    const shapes = inputs.map((input) => [...input.shape]);
    const axis = tf.util.parseAxisParam(call.attrsAs<tf.ConcatAttrs>().axis, shapes[0]!)[0]!;
    tf.backend_util.assertParamsConsistent(shapes, axis);
    return output(tf.backend_util.computeOutShape(shapes, axis), inputs[0]!.dtype);
  },
  /** The inputs stacked along a new axis. */
  Pack: (call) => {
    const inputs = call.inputList();
    const { axis } = call.attrsAs<tf.PackAttrs>();
    const first = inputs[0]!;
    for (const input of inputs) {
      tf.util.assertShapesMatch([...first.shape], [...input.shape], 'All tensors passed to stack must have matching shapes');
      tf.util.assert(first.dtype === input.dtype, () => 'All tensors passed to stack must have matching dtypes');
    }
    const shape = [...first.shape];
    shape.splice(axis < 0 ? axis + shape.length + 1 : axis, 0, inputs.length);
    return output(shape, first.dtype);
  },
};
