/**
 * Shape rules of kernels that make tensors from attributes alone: `Fill`,
 * `Range`, `LinSpace`, and `Multinomial` (random samples of a distribution).
 */
import * as tf from '@tensorflow/tfjs';
import { output, type KernelShapeRule } from '../rules/kernel_shape_rule.js';

/**
 * The length of `Range(start, stop, step)`: the cpu backend's rule, including
 * its empty ranges (a start equal to the stop, an increasing range with a
 * negative step, a decreasing one with a step above 1).
 */
function rangeLength(start: number, stop: number, step: number): number {
  const empty = start === stop || (start < stop && step < 0) || (stop < start && step > 1);
  return empty ? 0 : Math.abs(Math.ceil((stop - start) / step));
}

/** The tensor-making kernels, by kernel name. */
export const CREATION_RULES: Readonly<Record<string, KernelShapeRule>> = {
  Fill: (call) => {
    const { shape, value, dtype } = call.attrsAs<tf.FillAttrs>();
    return output(shape, dtype ?? tf.util.inferDtype(value));
  },
  Range: (call) => {
    const { start, stop, step, dtype } = call.attrsAs<tf.RangeAttrs>();
    return output([rangeLength(start, stop, step)], dtype);
  },
  LinSpace: (call) => output([call.attrsAs<tf.LinSpaceAttrs>().num], 'float32'),
  /** `numSamples` int32 draws per row of logits. */
  Multinomial: (call) => output([call.input('logits').shape[0]!, call.attrsAs<tf.MultinomialAttrs>().numSamples], 'int32'),
};
