/**
 * `dynamicSlice`: PopTorch's `dynamic_slice`, a slice at an offset that is a
 * tensor.
 */
import type * as tf from '@tensorflow/tfjs';
import { runDynamicSlice } from '../lib/backend/poptfjs_kernels/dynamic_slice_kernels.js';
import { argumentError, checkedDim, checkSize, checkStart, checkTensor } from './arguments/dynamic_offset.js';

const OP = 'dynamicSlice';

/**
 * The slice of `x` along dimension `dim` that starts at the offset held by
 * `start` (an int32 tensor of one element) and spans `size` elements, of
 * which every `step`-th is taken: `x[start : start + size : step]` along
 * `dim`, `ceil(size / step)` elements. The offset is read each time the
 * model runs, so one compiled model serves every offset; `size` and `step`
 * are fixed. As in PopTorch, `size` must divide the dimension; an offset
 * that puts the slice outside `x` is an error when the op runs. The op is a
 * `poptfjs.DynamicSlice` node, which copies the slice on the device; its
 * gradient is written into zeros at the same offset.
 */
export function dynamicSlice(x: tf.Tensor, dim: number, start: tf.Tensor, size: number, step: number): tf.Tensor {
  checkTensor(OP, 'the tensor to slice', x);
  const d = checkedDim(OP, x, dim);
  checkStart(OP, start);
  const length = x.shape[d]!;
  checkSize(OP, size, length, d);
  if (!Number.isInteger(step) || step < 1) throw argumentError(OP, `Slicing step must be at least 1, got ${String(step)}`);
  if (length % size !== 0) throw argumentError(OP, `The size of the slice (${size}) must be a factor of the slicing dimension (${length}).`);
  return runDynamicSlice(x, start, { dim: d, size, step });
}
