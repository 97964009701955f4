/**
 * Shape rules of gathers, scatters, one-hot encoding, segment sums and
 * counts, computed with tfjs's `segment_util`, `gather_util` and
 * `scatter_util`. `Unique` depends on its input's values.
 */
import * as tf from '@tensorflow/tfjs';
import { output, type KernelShapeRule } from '../rules/kernel_shape_rule.js';
import { valueDependentRule } from '../rules/value_dependent_rule.js';

/** The indexing kernels, by kernel name. */
export const INDEXING_RULES: Readonly<Record<string, KernelShapeRule>> = {
  GatherV2: (call) => {
    const x = call.input('x');
    const { axis, batchDims } = call.attrsAs<tf.GatherV2Attrs>();
    const parsedAxis = tf.util.parseAxisParam(axis, [...x.shape])[0]!;
    const info = tf.backend_util.segment_util.collectGatherOpShapeInfo(x, call.input('indices'), parsedAxis, batchDims ?? 0);
    return output(info.outputShape, x.dtype);
  },
  GatherNd: (call) => {
    const params = call.input('params');
    const [resultShape] = tf.gather_util.prepareAndValidate(params, call.input('indices'));
    return output(resultShape, params.dtype);
  },
  /** A new tensor of attribute `shape` holding the summed updates. */
  ScatterNd: (call) => {
    const updates = call.input('updates');
    const { shape } = call.attrsAs<tf.ScatterNdAttrs>();
    tf.scatter_util.calculateShapes(updates, call.input('indices'), shape);
    return output(shape, updates.dtype);
  },
  /** `tensor` with slices replaced by the updates. */
  TensorScatterUpdate: (call) => {
    const tensor = call.input('tensor');
    const updates = call.input('updates');
    tf.scatter_util.calculateShapes(updates, call.input('indices'), [...tensor.shape]);
    return output(tensor.shape, updates.dtype);
  },
  SparseToDense: (call) => {
    const values = call.input('sparseValues');
    const { outputShape } = call.attrsAs<tf.SparseToDenseAttrs>();
    tf.scatter_util.calculateShapes(values, call.input('sparseIndices'), outputShape);
    return output(outputShape, values.dtype);
  },
  OneHot: (call) => {
    const { depth, dtype } = call.attrsAs<tf.OneHotAttrs>();
    return output([...call.input('indices').shape, depth], dtype);
  },
  /** `numSegments` rows of x's trailing shape; float32, as the cpu backend computes it. */
  UnsortedSegmentSum: (call) => {
    const x = call.input('x');
    return output(tf.backend_util.segment_util.computeOutShape([...x.shape], 0, call.attrsAs<tf.UnsortedSegmentSumAttrs>().numSegments), 'float32');
  },
  /** A count per bin: `size` bins, in the weights' dtype. */
  Bincount: (call) => output([call.attrsAs<tf.BincountAttrs>().size], call.input('weights').dtype),
  /** `size` bins for a vector, one row of `size` bins per row of a matrix. */
  DenseBincount: (call) => {
    const x = call.input('x');
    const { size } = call.attrsAs<tf.DenseBincountAttrs>();
    return output(x.shape.length === 1 ? [size] : [x.shape[0]!, size], call.input('weights').dtype);
  },
  Unique: valueDependentRule('the number of unique elements depends on the values of its input'),
};
