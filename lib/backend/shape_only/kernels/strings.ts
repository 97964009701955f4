/** Shape rules of string kernels whose output sizes depend on the strings: splitting and n-grams. */
import type { KernelShapeRule } from '../rules/kernel_shape_rule.js';
import { valueDependentRule } from '../rules/value_dependent_rule.js';

/** The string kernels, by kernel name (element-wise ones are in the element-wise rules). */
export const STRING_RULES: Readonly<Record<string, KernelShapeRule>> = {
  StringSplit: valueDependentRule('how many tokens there are depends on the strings'),
  StringNGrams: valueDependentRule('how many n-grams there are depends on the values of its splits'),
};
