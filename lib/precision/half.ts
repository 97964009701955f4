/**
 * Declaring float16 data: `half(model)` (PyTorch's `model.half()`),
 * `half(variable)`, `half(variables)` and `half(tensor)` (`tensor.half()`).
 *
 * tfjs has no float16 dtype, so a float16 tensor is a float32 tensor whose
 * values are exactly representable in float16, remembered as float16 here.
 * Compiling a model reads these marks: float16 parameters are stored in 2
 * bytes on the simulated device and every op with a float16 input rounds its
 * result to float16 (see `inferFloat16`); float16 inputs are rounded when
 * they enter the device; outputs computed in float16 come back marked, so
 * {@link dtypeOf} reports `'float16'` for them. Inside a model being traced,
 * `half(x)` of a value the model computes (an input, an activation, a random
 * draw) is a float16 cast in its graph, run by the device each time (a random
 * draw made float16 is drawn afresh on every run). On the shape-only backend
 * (planning with `plan()`) there are no values to round: only the marks are set.
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../common/errors.js';
import { roundFloat16Array } from './float16.js';
import { SHAPE_ONLY_BACKEND } from '../backend/shape_only/backend_registration.js';
import { isFloat16Tensor, markFloat16Tensor } from '../backend/float16_tensor_marks.js';
import { POPTFJS_KERNELS } from '../backend/poptfjs_kernels/kernel_names.js';
import { currentRecorder } from '../trace/kernel_recorder.js';

/** A tfjs dtype, or `'float16'` for float32 tensors that hold float16 values. */
export type PoptfjsDataType = tf.DataType | 'float16';

/** What {@link half} converts: a layers model, a variable, a list of variables, or a tensor. */
export type HalfTarget = tf.LayersModel | tf.Variable | readonly tf.Variable[] | tf.Tensor;

const halfVariables = new WeakSet<tf.Variable>();

/** True while tfjs runs on the shape-only backend, where tensors have no values to round. */
function shapesOnly(): boolean {
  return tf.getBackend() === SHAPE_ONLY_BACKEND;
}

function roundedValues(t: tf.Tensor): tf.Tensor {
  if (shapesOnly()) return tf.clone(t);
  const values = t.dataSync() as Float32Array;
  return tf.tensor(roundFloat16Array(values), t.shape, 'float32');
}

function halfVariable(variable: tf.Variable): void {
  if (variable.dtype !== 'float32') {
    throw new PoptfjsError(`half: variable '${variable.name}' has dtype ${variable.dtype}; only float32 variables can be made float16`, {
      type: 'precision',
    });
  }
  if (!shapesOnly()) {
    const rounded = roundedValues(variable);
    variable.assign(rounded);
    rounded.dispose();
  }
  halfVariables.add(variable);
}

/**
 * Makes parameters or data float16, as PyTorch's `.half()`:
 * - a layers model: every weight (trainable or not) is rounded to the
 *   nearest float16 in place and held in float16 from now on; returns the model;
 * - a variable, or a list of variables: the same for those variables
 *   (mix float16 and float32 parameters this way); returns its argument;
 * - a tensor: returns a new float16 tensor (the values rounded to nearest
 *   float16), to pass as a float16 model input; inside a model, a value the
 *   model computes becomes a float16 cast in its graph, which the device
 *   rounds each time it runs (its gradient passes through), as PyTorch's
 *   `x.half()` in `forward`.
 */
export function half<T extends HalfTarget>(target: T): T {
  if (target instanceof tf.LayersModel) {
    for (const w of target.weights) halfVariable((w as unknown as { val: tf.Variable }).val);
    return target;
  }
  if (target instanceof tf.Variable) {
    halfVariable(target);
    return target;
  }
  if (target instanceof tf.Tensor) {
    if (target.dtype !== 'float32') {
      throw new PoptfjsError(`half: the tensor has dtype ${target.dtype}; only float32 tensors can be made float16`, { type: 'precision' });
    }
    const recorder = currentRecorder();
    if (recorder && (recorder.isDynamic(target) || recorder.isRandomDraw(target)))
      return markFloat16(tf.engine().runKernel(POPTFJS_KERNELS.float16Cast, { x: target }) as tf.Tensor) as T;
    return markFloat16(roundedValues(target)) as T;
  }
  if (Array.isArray(target) && target.every((v) => v instanceof tf.Variable)) {
    target.forEach(halfVariable);
    return target;
  }
  throw new PoptfjsError('half: expected a tf.LayersModel, a tf.Variable, an array of tf.Variable or a float32 tf.Tensor', { type: 'precision' });
}

/** @internal Marks a float32 tensor whose values are float16 values as float16 (the device's float16 outputs). */
export function markFloat16(t: tf.Tensor): tf.Tensor {
  markFloat16Tensor(t);
  return t;
}

/** True if `t` is float16: a variable made float16 by {@link half}, a float16 tensor, or a float16 output of the device. */
export function isHalf(t: tf.Tensor): boolean {
  return t instanceof tf.Variable ? halfVariables.has(t) : isFloat16Tensor(t);
}

/** The dtype of `t` as poptfjs sees it: `'float16'` for float16 tensors, the tfjs dtype otherwise. */
export function dtypeOf(t: tf.Tensor): PoptfjsDataType {
  return isHalf(t) ? 'float16' : t.dtype;
}
