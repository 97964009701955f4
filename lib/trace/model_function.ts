/**
 * The callable view of what a user wraps: a `tf.LayersModel` (sequential or
 * functional) or a plain function of tensors.
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../common/errors.js';

/**
 * A plain function of tensors that poptfjs can wrap: its arguments are
 * tensors, or arrays and plain objects of them (`nested_values.ts`). Typed to
 * accept any function; the arguments are checked when it is called.
 */
export type TensorFunction = (...inputs: never[]) => unknown;

/** Calls the function model `model` with `args`. */
export function callFunction(model: TensorFunction, args: readonly unknown[]): unknown {
  return (model as (...inputs: unknown[]) => unknown)(...args);
}

/** What the user wraps. */
export type WrappableModel = tf.LayersModel | TensorFunction;

/** True if `model` is a tfjs layers model (sequential or functional). */
export function isLayersModel(model: unknown): model is tf.LayersModel {
  return model instanceof tf.LayersModel;
}

/** Every layer of a layers model, nested models included, depth first. */
export function allLayers(model: WrappableModel): tf.layers.Layer[] {
  if (!isLayersModel(model)) return [];
  const out: tf.layers.Layer[] = [];
  const visit = (layer: tf.layers.Layer) => {
    out.push(layer);
    const inner = (layer as unknown as { layers?: tf.layers.Layer[] }).layers;
    if (Array.isArray(inner)) inner.forEach(visit);
  };
  model.layers.forEach(visit);
  return out;
}

/** The model's name, for messages and reports. */
export function modelName(model: WrappableModel): string {
  return isLayersModel(model) ? model.name : model.name || 'anonymous function';
}

/** Runs the model on `inputs` (the model's own inputs only) with the given training flag. */
export function callModel(model: WrappableModel, inputs: tf.Tensor[], training: boolean): unknown {
  if (isLayersModel(model)) {
    return model.apply(inputs.length === 1 ? inputs[0]! : inputs, { training });
  }
  return callFunction(model, inputs);
}

/** Number of tensors the model itself takes, when it can be known. */
export function modelInputCount(model: WrappableModel): number | undefined {
  if (isLayersModel(model)) return model.inputs.length;
  return model.length > 0 ? model.length : undefined;
}

/** The model's outputs as a flat list of tensors; anything else is an error. */
export function flattenOutputs(result: unknown, what: string): tf.Tensor[] {
  const list = Array.isArray(result) ? result : [result];
  list.forEach((t, i) => {
    if (!(t instanceof tf.Tensor)) {
      const got = t === null ? 'null' : Array.isArray(t) ? 'a nested array' : typeof t;
      throw new PoptfjsError(`${what} returned ${Array.isArray(result) ? `${got} at position ${i}` : got}; expected a tf.Tensor or an array of tf.Tensors`, { type: 'trace' });
    }
  });
  return list as tf.Tensor[];
}

/** The trainable tf.Variables of a layers model, or undefined for a function. */
export function trainableVariables(model: WrappableModel): tf.Variable[] | undefined {
  if (!isLayersModel(model)) return undefined;
  return model.trainableWeights.map((w) => (w as unknown as { val: tf.Variable }).val);
}
