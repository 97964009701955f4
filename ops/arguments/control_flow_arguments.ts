/**
 * The argument checks `ops.forLoop` and `ops.cond` share: lists of input
 * tensors, what a body returns, and how errors show a tensor's type.
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../../lib/common/errors.js';

/** A body of a control-flow op: takes its input tensors, returns a tensor or a list of them. */
export type ControlFlowBody = (...inputs: tf.Tensor[]) => tf.Tensor | readonly tf.Tensor[];

/** An error of a control-flow op's arguments, located at the op (`op` is e.g. `ops.forLoop`). */
export function controlFlowError(op: string, message: string): PoptfjsError {
  return new PoptfjsError(message, { type: 'trace', location: op });
}

/** A tensor's dtype and shape as errors show them, e.g. `float32[2,4]`. */
export function tensorTypeText(t: tf.Tensor): string {
  return `${t.dtype}[${t.shape.join(',')}]`;
}

/**
 * `list` as an array of tensors, else PopTorch's error (`what` names the
 * argument, e.g. `ops.forLoop expects input tensors (inputs)`).
 */
export function checkedTensorList(op: string, what: string, list: unknown): tf.Tensor[] {
  if (!Array.isArray(list)) throw controlFlowError(op, `${what} to be a list of tensors. (Object is not list)`);
  list.forEach((t, i) => {
    if (!(t instanceof tf.Tensor)) throw controlFlowError(op, `${what} to be a list of tensors. (Object contained in list at index ${i} is not tf.Tensor)`);
  });
  return list as tf.Tensor[];
}

/** A function argument, else an error naming it. */
export function checkedBody(op: string, name: string, body: unknown): ControlFlowBody {
  if (typeof body !== 'function') throw controlFlowError(op, `${op}: ${name} must be a function, got ${body === null ? 'null' : typeof body}`);
  return body as ControlFlowBody;
}

/** What a body returned, as a list of tensors (a single tensor is a list of one); an error naming the body for anything else. */
export function bodyOutputs(op: string, body: string, result: unknown): tf.Tensor[] {
  const list = result instanceof tf.Tensor ? [result] : result;
  if (!Array.isArray(list) || list.some((t) => !(t instanceof tf.Tensor))) {
    throw controlFlowError(op, `${op}: ${body} must return a tf.Tensor or a list of them`);
  }
  return [...list] as tf.Tensor[];
}
