/**
 * The arguments `ops.dynamicSlice` and `ops.dynamicUpdate` share, checked as
 * PopTorch checks them: the tensor, the dimension, the offset tensor and the
 * size of the slice.
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../../lib/common/errors.js';

/** An error of op `op` about its arguments. */
export function argumentError(op: string, message: string): PoptfjsError {
  return new PoptfjsError(`${op}: ${message}`, { type: 'trace', location: op });
}

function describe(value: unknown): string {
  return value === null ? 'null' : value instanceof tf.Tensor ? `a ${value.dtype} tensor of shape [${value.shape.join(', ')}]` : typeof value;
}

/** Checks `x` is a tensor (`what` says which argument). */
export function checkTensor(op: string, what: string, x: unknown): asserts x is tf.Tensor {
  if (!(x instanceof tf.Tensor)) throw argumentError(op, `${what} must be a tf.Tensor, got ${describe(x)}`);
}

/** The dimension `dim` of `x` as a non-negative index (a negative one counts from the end). */
export function checkedDim(op: string, x: tf.Tensor, dim: unknown): number {
  if (!Number.isInteger(dim) || (dim as number) < -x.rank || (dim as number) >= x.rank) {
    throw argumentError(op, `dim must be an integer from ${-x.rank} to ${x.rank - 1} (the tensor has rank ${x.rank}), got ${String(dim)}`);
  }
  return (dim as number) < 0 ? (dim as number) + x.rank : (dim as number);
}

/** Checks the offset is an int32 tensor of one element, read when the op runs. */
export function checkStart(op: string, start: unknown): asserts start is tf.Tensor {
  if (!(start instanceof tf.Tensor) || start.dtype !== 'int32' || start.size !== 1) {
    throw argumentError(op, `start must be an int32 tensor of one element (the offset, read each time the op runs), got ${describe(start)}`);
  }
}

/** Checks the size of the slice: a positive integer no larger than the dimension (PopTorch's messages). */
export function checkSize(op: string, size: unknown, length: number, dim: number): asserts size is number {
  if (!Number.isInteger(size)) throw argumentError(op, `size must be an integer, got ${String(size)}`);
  if ((size as number) === 0) throw argumentError(op, 'The start and end of a slice must be different.');
  if ((size as number) < 0) throw argumentError(op, 'Taking a slice of a tensor with the end less than the start is not supported.');
  if ((size as number) > length) throw argumentError(op, `the size of the slice (${String(size)}) is larger than dimension ${dim} (${length})`);
}
