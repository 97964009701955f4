/**
 * Gradients that make their fills with the `Fill` kernel while planning.
 *
 * Three of tfjs's gradient functions (those of `Mean`, `Sum` and `OneHot`)
 * make a tensor of ones or zeros of their input's shape in JavaScript
 * (`tf.ones`, `tf.zeros`), as large as an activation. A trace records such a
 * tensor as a `Fill` node of the graph (`kernel_recorder`), so on the
 * shape-only backend these gradients are registered in the same form with
 * the fill made by tfjs's `Fill` kernel, which the backend answers with a
 * shape: the graph is the same, and nothing is computed. Fills small enough
 * for a trace to keep as constants (at most `SHAPE_ONLY_MAX_KEPT_ELEMENTS`
 * elements) are made as tfjs makes them, so they stay constants. Each
 * function below is tfjs 4.22's (tfjs-core/src/gradients) with that one
 * change.
 */
import * as tf from '@tensorflow/tfjs';
import { SHAPE_ONLY_MAX_KEPT_ELEMENTS } from './shape_only_backend.js';

/** A float32 tensor of `value` of `shape`: by the `Fill` kernel when a trace would record it as a fill, else as `tf.ones`/`tf.zeros` make it. */
function filled(shape: number[], value: 0 | 1): tf.Tensor {
  if (tf.util.sizeFromShape(shape) > SHAPE_ONLY_MAX_KEPT_ELEMENTS) return tf.fill(shape, value, 'float32');
  return value === 1 ? tf.ones(shape, 'float32') : tf.zeros(shape, 'float32');
}

/** `dy` reshaped to `x`'s rank, with the reduced axes of size 1. */
function expandedOver(dy: tf.Tensor, x: tf.Tensor, axes: number[]): tf.Tensor {
  const expandedShape = x.shape.slice();
  for (const axis of axes) expandedShape[axis] = 1;
  return tf.reshape(dy, expandedShape);
}

const meanGradient: tf.GradConfig = {
  kernelName: 'Mean',
  inputsToSave: ['x'],
  gradFunc: (dy, saved, attrs) => {
    const [x] = saved as [tf.Tensor];
    const axes = tf.util.parseAxisParam((attrs as { axis: number | number[] }).axis, x.shape);
    const reduceSize = tf.util.sizeFromShape(tf.backend_util.computeOutAndReduceShapes(x.shape, axes)[1]);
    return { x: () => tf.div(tf.mul(expandedOver(dy as tf.Tensor, x, axes), filled(x.shape, 1)), reduceSize) };
  },
};

const sumGradient: tf.GradConfig = {
  kernelName: 'Sum',
  inputsToSave: ['x'],
  gradFunc: (dy, saved, attrs) => {
    const [x] = saved as [tf.Tensor];
    const axes = tf.util.parseAxisParam((attrs as { axis: number | number[] }).axis, x.shape);
    const derX = tf.mul(expandedOver(dy as tf.Tensor, x, axes), filled(x.shape, 1));
    return { x: () => derX };
  },
};

const oneHotGradient: tf.GradConfig = {
  kernelName: 'OneHot',
  inputsToSave: ['indices'],
  gradFunc: (_dy, saved) => {
    const [indices] = saved as [tf.Tensor];
    return { indices: () => filled(indices.shape, 0) };
  },
};

/** The gradients replaced while planning. */
export const FILL_GRADIENTS: readonly tf.GradConfig[] = [meanGradient, sumGradient, oneHotGradient];

/** Registers {@link FILL_GRADIENTS} in tfjs's gradient registry; returns the function that registers tfjs's own again. */
export function fillGradientsWithKernels(): () => void {
  const replaced = FILL_GRADIENTS.map((config) => tf.getGradient(config.kernelName));
  for (const config of FILL_GRADIENTS) tf.registerGradient(config);
  return () => {
    for (const config of replaced) if (config !== undefined) tf.registerGradient(config);
  };
}
