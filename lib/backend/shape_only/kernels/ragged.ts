/**
 * Shape rules of ragged tensors: each output's size depends on the row
 * splits' values (or, for `RaggedRange`, on the starts, limits and deltas).
 */
import type { KernelShapeRule } from '../rules/kernel_shape_rule.js';
import { valueDependentRule } from '../rules/value_dependent_rule.js';

/** The ragged kernels, by kernel name. */
export const RAGGED_RULES: Readonly<Record<string, KernelShapeRule>> = {
  RaggedGather: valueDependentRule('the lengths of the gathered rows depend on the values of its row splits and indices'),
  RaggedRange: valueDependentRule('the length of each range depends on the values of its starts, limits and deltas'),
  RaggedTensorToTensor: valueDependentRule('the dense shape depends on the values of its shape and row partitions'),
};
