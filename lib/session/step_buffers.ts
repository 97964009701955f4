/**
 * Moving a step's data between the host buffers of a `StepIO` and tensors:
 * each input buffer becomes the host batch the executable splits into
 * micro-batches, and each anchor's values are written into its buffer. With
 * runtime asserts on, every buffer must hold exactly a step's values;
 * without, a larger buffer is accepted and only its beginning is used. An
 * error states the buffer, its size and type, and the size and type expected.
 */
import * as tf from '@tensorflow/tfjs';
import { PopartException } from '../common/errors.js';
import { sizeOf } from '../ir/graph.js';
import type { TensorInfo } from '../onnx/graph_evaluation.js';
import { hostArrayName, inputArrayShape, microBatchesPerStep, type StepFactors } from './anchor_arrays.js';
import type { HostArray, StepIO } from './step_io.js';

function matchesDtype(buffer: HostArray, dtype: tf.DataType): boolean {
  return hostArrayName(dtype) === buffer.constructor.name;
}

/** Checks a buffer against `size` values of `dtype`; `what` names it and `shape` says where the size comes from. */
export function checkBuffer(buffer: HostArray, dtype: tf.DataType, size: number, exact: boolean, what: string, shape: readonly number[]): void {
  if (!matchesDtype(buffer, dtype)) {
    throw new PopartException(`${what} is a ${buffer.constructor.name}, but the tensor is ${dtype}: give a ${hostArrayName(dtype)}`);
  }
  if (exact ? buffer.length !== size : buffer.length < size) {
    throw new PopartException(
      `${what} has ${buffer.length} elements, expected ${exact ? '' : 'at least '}${size} (shape [${shape.join(', ')}])` +
        (exact ? '' : '; with runtime asserts off, larger buffers are accepted but not smaller ones'),
    );
  }
}

/**
 * The host batches of the model's inputs (in `inputNames` order) from a
 * StepIO: each input of shape `S` as `[microBatches · S[0], ...S[1:]]` (or
 * `S` when a step is one micro-batch). The caller owns them.
 */
export function stepInputs(stepio: StepIO, inputNames: readonly string[], info: ReadonlyMap<string, TensorInfo>, f: StepFactors): tf.Tensor[] {
  const unknown = [...stepio.inputs.keys()].filter((name) => !inputNames.includes(name));
  if (unknown.length > 0) {
    throw new PopartException(
      `StepIO has input(s) ${unknown.map((n) => `'${n}'`).join(', ')} that the model does not take; its inputs are ${inputNames.map((n) => `'${n}'`).join(', ')}`,
    );
  }
  const missing = inputNames.filter((name) => !stepio.inputs.has(name));
  if (missing.length > 0) throw new PopartException(`StepIO has no buffer for input(s) ${missing.map((n) => `'${n}'`).join(', ')}`);
  const steps = microBatchesPerStep(f);
  return inputNames.map((name) => {
    const { shape, dtype } = info.get(name)!;
    const size = steps * sizeOf(shape);
    const buffer = stepio.inputs.get(name)!;
    checkBuffer(buffer, dtype, size, stepio.runtimeAssertsEnabled, `StepIO input '${name}'`, inputArrayShape(f, shape));
    const hostShape = steps > 1 ? [steps * shape[0]!, ...shape.slice(1)] : [...shape];
    return tf.tensor(buffer.length === size ? buffer : buffer.subarray(0, size), hostShape, dtype);
  });
}

/** Writes the values of anchor `name` (already laid out for its buffer) into the StepIO's buffer for it. */
export function writeAnchor(stepio: StepIO, name: string, values: tf.Tensor): void {
  const buffer = stepio.outputs.get(name);
  if (!buffer) throw new PopartException(`StepIO has no buffer for anchor '${name}'; make the buffers with session.initAnchorArrays()`);
  checkBuffer(buffer, values.dtype, values.size, stepio.runtimeAssertsEnabled, `StepIO buffer of anchor '${name}'`, values.shape);
  buffer.set(values.dataSync() as HostArray);
}
