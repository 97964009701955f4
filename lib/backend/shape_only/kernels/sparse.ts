/**
 * Shape rules of sparse tensors (indices, values, dense shape). Reshaping a
 * sparse tensor is planned from shapes; filling empty rows and segment
 * reductions depend on the indices' values.
 */
import type * as tf from '@tensorflow/tfjs';
import { output, type KernelShapeRule } from '../rules/kernel_shape_rule.js';
import { valueDependentRule } from '../rules/value_dependent_rule.js';

/**
 * A sparse segment reduction (`SparseSegmentSum`, `SparseSegmentMean`): one
 * row per segment up to the last segment id, which only the values of
 * `segmentIds` give.
 */
const sparseSegmentReduction = valueDependentRule('the number of segments is the last value of its segment ids plus one', {
  needs: ['segmentIds'],
  outputs: (call, values) => {
    const data = call.input('data');
    const indexCount = call.input('indices').shape[0]!;
    const segmentIds = values.get('segmentIds') as tf.TypedArray;
    const rows = indexCount > 0 ? segmentIds[indexCount - 1]! + 1 : 0;
    return output([rows, ...data.shape.slice(1)], data.dtype);
  },
});

/** The sparse kernels, by kernel name. */
export const SPARSE_RULES: Readonly<Record<string, KernelShapeRule>> = {
  /** The indices re-expressed for `newShape` (one column per new axis), and the new dense shape. */
  SparseReshape: (call) => {
    const inputIndices = call.input('inputIndices');
    const newShape = call.input('newShape');
    const newRank = newShape.shape[0]!;
    return [output([inputIndices.shape[0]!, newRank], inputIndices.dtype), output([newRank], newShape.dtype)];
  },
  SparseFillEmptyRows: valueDependentRule('how many rows are empty depends on the values of its indices and dense shape'),
  SparseSegmentSum: sparseSegmentReduction,
  SparseSegmentMean: sparseSegmentReduction,
};
