/** Shape rules of the kernels that order or search: `TopK` and `SearchSorted`. */
import type * as tf from '@tensorflow/tfjs';
import { output, type KernelShapeRule } from '../rules/kernel_shape_rule.js';

/** The ordering kernels, by kernel name. */
export const SORTING_RULES: Readonly<Record<string, KernelShapeRule>> = {
  /** The `k` largest values along the last axis and their int32 indices. */
  TopK: (call) => {
    const x = call.input('x');
    const shape = [...x.shape.slice(0, -1), call.attrsAs<tf.TopKAttrs>().k];
    return [output(shape, x.dtype), output(shape, 'int32')];
  },
  /** An int32 insertion index per value. */
  SearchSorted: (call) => output(call.input('values').shape, 'int32'),
};
