/**
 * The names PopART gives the tensors of a training step, which
 * `Options.anchorTensor` takes besides the values of `irText()`:
 * `Gradient___<weight>` (the gradient of the scaled loss with respect to a
 * weight), `UpdatedVar___<weight>` (the weight after the step's update) and
 * `finalLossScale` (the loss scale the step used).
 */

/** PopART's prefix of gradient tensor names. */
export const GRADIENT_PREFIX = 'Gradient___';

/** PopART's prefix of the names of weights as the optimizer step leaves them. */
export const UPDATED_VARIABLE_PREFIX = 'UpdatedVar___';

/** PopART's name of the loss scale a step used (the optimizer's `lossScaling`, as automatic loss scaling updated it). */
export const FINAL_LOSS_SCALE = 'finalLossScale';

/** The weight an `UpdatedVar___<weight>` name names, or undefined for another name. */
export function updatedWeightOf(longName: string): string | undefined {
  return longName.startsWith(UPDATED_VARIABLE_PREFIX) ? longName.slice(UPDATED_VARIABLE_PREFIX.length) : undefined;
}
