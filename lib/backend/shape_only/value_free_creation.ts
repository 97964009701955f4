/**
 * Nothing computed while planning: what tfjs would compute in JavaScript
 * without a kernel, and so before the shape-only backend could drop it, is
 * made without values while the shape-only backend is in use: random draws
 * ({@link drawWithoutValues}), the initial values of layers' weights
 * ({@link weighWithoutValues}) and the fills of gradients
 * ({@link fillGradientsWithKernels}).
 *
 * What a model passes to tfjs as values (`tf.tensor` of an array, and
 * `tf.zeros`/`tf.ones`, whose arrays tfjs makes before any hook can see
 * them) reaches the backend as values, which it drops at once beyond the
 * few elements it keeps.
 */
import { engine } from '../tfjs_internals.js';
import { fillGradientsWithKernels } from './fill_gradients.js';
import { ShapeOnlyBackend } from './shape_only_backend.js';
import { drawWithoutValues } from './value_free_draws.js';
import { weighWithoutValues } from './value_free_weights.js';

/** The shape-only backend when it is the backend in use, else undefined. */
function shapeOnlyInUse(): ShapeOnlyBackend | undefined {
  const backend = engine().backend;
  return backend instanceof ShapeOnlyBackend ? backend : undefined;
}

/** Makes random draws, layers' initial weights and gradients' fills without values while the shape-only backend is in use; returns the function that undoes it. */
export function createWithoutValues(): () => void {
  const undo = [drawWithoutValues(shapeOnlyInUse), weighWithoutValues(shapeOnlyInUse), fillGradientsWithKernels()];
  return () => {
    for (const step of undo.reverse()) step();
  };
}
