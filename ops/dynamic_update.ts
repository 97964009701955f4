/**
 * `dynamicUpdate`: PopTorch's `dynamic_update`, a slice replaced at an
 * offset that is a tensor.
 */
import type * as tf from '@tensorflow/tfjs';
import { runDynamicUpdate } from '../lib/backend/poptfjs_kernels/dynamic_slice_kernels.js';
import { argumentError, checkedDim, checkSize, checkStart, checkTensor } from './arguments/dynamic_offset.js';

const OP = 'dynamicUpdate';

/**
 * `x` with the `size` elements along dimension `dim` that start at the
 * offset held by `start` (an int32 tensor of one element) replaced by `src`,
 * which has `x`'s rank, dtype and shape except `size` elements along `dim`.
 * The offset is read each time the model runs, so one compiled model serves
 * every offset; an offset that puts the slice outside `x` is an error when
 * the op runs. The op is a `poptfjs.DynamicUpdate` node; its gradient is the
 * incoming gradient with the slice zeroed for `x`, and the slice of it for
 * `src`.
 */
export function dynamicUpdate(x: tf.Tensor, src: tf.Tensor, dim: number, start: tf.Tensor, size: number): tf.Tensor {
  checkTensor(OP, 'the tensor to update', x);
  checkTensor(OP, 'src', src);
  const d = checkedDim(OP, x, dim);
  checkStart(OP, start);
  checkSize(OP, size, x.shape[d]!, d);
  if (x.rank !== src.rank) throw argumentError(OP, `input and src tensors must have same dimensionality. (${x.rank}) vs (${src.rank})`);
  if (x.dtype !== src.dtype) throw argumentError(OP, `input and src tensor must have same dtype. (${x.dtype} vs ${src.dtype})`);
  const expected = x.shape.map((n, i) => (i === d ? size : n));
  if (src.shape.some((n, i) => n !== expected[i])) {
    throw argumentError(OP, `src must have shape [${expected.join(', ')}] (the input's, with ${size} along dimension ${d}), got [${src.shape.join(', ')}]`);
  }
  return runDynamicUpdate(x, src, start, { dim: d, size });
}
