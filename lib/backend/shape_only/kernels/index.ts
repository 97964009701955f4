/**
 * The shape rules of tfjs's kernels, by kernel name, gathered from the
 * families of this folder; the kernel catalogue (../../kernel_catalogue) joins
 * them to its records.
 */
import type { KernelShapeRule } from '../rules/kernel_shape_rule.js';
import { COMPLEX_RULES } from './complex.js';
import { CONVOLUTION_RULES } from './convolution.js';
import { CREATION_RULES } from './creation.js';
import { ELEMENTWISE_BINARY_RULES } from './elementwise_binary.js';
import { ELEMENTWISE_UNARY_RULES } from './elementwise_unary.js';
import { IMAGE_RULES } from './image.js';
import { INDEXING_RULES } from './indexing.js';
import { MATMUL_RULES } from './matmul.js';
import { NORMALIZATION_RULES } from './normalization.js';
import { POOLING_RULES } from './pooling.js';
import { RAGGED_RULES } from './ragged.js';
import { REDUCTION_RULES } from './reduction.js';
import { RESHAPING_RULES } from './reshaping.js';
import { SLICING_RULES } from './slicing.js';
import { SORTING_RULES } from './sorting.js';
import { SPARSE_RULES } from './sparse.js';
import { STRING_RULES } from './strings.js';

const FAMILIES: ReadonlyArray<Readonly<Record<string, KernelShapeRule>>> = [
  ELEMENTWISE_UNARY_RULES,
  ELEMENTWISE_BINARY_RULES,
  REDUCTION_RULES,
  MATMUL_RULES,
  CONVOLUTION_RULES,
  POOLING_RULES,
  NORMALIZATION_RULES,
  RESHAPING_RULES,
  SLICING_RULES,
  INDEXING_RULES,
  SORTING_RULES,
  CREATION_RULES,
  IMAGE_RULES,
  COMPLEX_RULES,
  SPARSE_RULES,
  RAGGED_RULES,
  STRING_RULES,
];

function gatherRules(): ReadonlyMap<string, KernelShapeRule> {
  const rules = new Map<string, KernelShapeRule>();
  for (const family of FAMILIES) {
    for (const [kernelName, rule] of Object.entries(family)) {
      if (rules.has(kernelName)) throw new Error(`two shape rules for kernel '${kernelName}'`);
      rules.set(kernelName, rule);
    }
  }
  return rules;
}

/** The shape rule of each of tfjs's kernels, by kernel name (the kernel catalogue adds poptfjs's own). */
export const FAMILY_SHAPE_RULES: ReadonlyMap<string, KernelShapeRule> = gatherRules();
