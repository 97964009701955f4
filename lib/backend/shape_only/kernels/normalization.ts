/**
 * Shape rules of normalizations: batch normalization, local response
 * normalization and its gradient, softmax. Each keeps its input's shape.
 */
import { output, type KernelShapeRule } from '../rules/kernel_shape_rule.js';

/** A kernel whose output has input `inputName`'s shape and dtype. */
function sameAs(inputName: string): KernelShapeRule {
  return (call) => {
    const input = call.input(inputName);
    return output(input.shape, input.dtype);
  };
}

/** The normalizations, by kernel name. */
export const NORMALIZATION_RULES: Readonly<Record<string, KernelShapeRule>> = {
  FusedBatchNorm: sameAs('x'),
  LRN: sameAs('x'),
  /** The gradient: `dy`'s shape, x's dtype. */
  LRNGrad: (call) => output(call.input('dy').shape, call.input('x').dtype),
  Softmax: sameAs('logits'),
};
