/**
 * The host tf.Variables of a wrapped model by name: a layers model's weights,
 * or for a function model every variable tfjs has registered.
 */
import type * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../common/errors.js';
import { engine } from '../backend/tfjs_internals.js';
import { isLayersModel, type WrappableModel } from '../trace/model_function.js';

/** The host tf.Variable called `name` (a weight of the model); an error listing the names otherwise. */
export function hostVariable(model: WrappableModel, name: string): tf.Variable {
  const candidates: tf.Variable[] = isLayersModel(model)
    ? model.weights.map((w) => (w as unknown as { val: tf.Variable }).val)
    : Object.values(engine().state.registeredVariables);
  const found = candidates.find((v) => v.name === name);
  if (!found) {
    throw new PoptfjsError(`the model has no weight called '${name}'${isLayersModel(model) ? `; its weights are ${candidates.map((v) => `'${v.name}'`).join(', ')}` : ''}`, {
      type: 'executor',
    });
  }
  return found;
}
