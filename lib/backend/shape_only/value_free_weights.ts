/**
 * Layers' weights without initial values while planning.
 *
 * Every weight of a tfjs layer, built-in or custom, is made by
 * `Layer.addWeight(name, shape, dtype, initializer, ...)`, which calls
 * `initializer.apply(shape, dtype)` for the initial value and wraps it in a
 * variable. On the shape-only backend the initializer is replaced by one
 * that describes the value by shape and dtype, so no initializer runs: no
 * random draw, no fill, no orthogonal decomposition, whatever the layer asked
 * for.
 */
import * as tf from '@tensorflow/tfjs';
import { engine } from '../tfjs_internals.js';
import type { ShapeOnlyBackend } from './shape_only_backend.js';

/** The part of a tfjs-layers initializer `Layer.addWeight` uses. */
interface InitialValues {
  apply(shape: number[], dtype?: tf.DataType): tf.Tensor;
}

type AddWeight = (
  this: tf.layers.Layer,
  name: string,
  shape: number[],
  dtype?: tf.DataType,
  initializer?: InitialValues,
  regularizer?: unknown,
  trainable?: boolean,
  constraint?: unknown,
  getInitializerFunc?: () => InitialValues,
) => unknown;

/**
 * Makes `Layer.addWeight` give layers weights without initial values while
 * `shapeOnly()` answers the backend in use (the shape-only one) or
 * undefined. Returns the function that undoes it.
 */
export function weighWithoutValues(shapeOnly: () => ShapeOnlyBackend | undefined): () => void {
  const prototype = tf.layers.Layer.prototype as unknown as { addWeight: AddWeight };
  const own = Object.hasOwn(prototype, 'addWeight');
  const addWeight = prototype.addWeight;
  prototype.addWeight = function (name, shape, dtype, initializer, regularizer, trainable, constraint, getInitializerFunc) {
    const backend = shapeOnly();
    if (backend === undefined) return addWeight.call(this, name, shape, dtype, initializer, regularizer, trainable, constraint, getInitializerFunc);
    const layer = this.name;
    const described: InitialValues = {
      apply: (valueShape, valueDtype) =>
        engine().makeTensorFromTensorInfo(
          backend.makeValueFree({ shape: valueShape, dtype: valueDtype ?? dtype ?? 'float32' }, { kind: 'initial', weight: name, layer }),
          backend,
        ),
    };
    return addWeight.call(this, name, shape, dtype, described, regularizer, trainable, constraint, () => described);
  };
  return () => {
    if (own) prototype.addWeight = addWeight;
    else delete (prototype as Partial<typeof prototype>).addWeight;
  };
}
