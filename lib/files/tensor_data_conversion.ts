/**
 * Converting between tfjs tensors and the host {@link TensorData} files hold.
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../common/errors.js';
import type { ConstantData } from '../ir/graph.js';
import type { TensorData } from '../proto/tensor_bytes.js';

/** A copy of the host data of a tensor (read synchronously), which stays valid after the tensor is disposed. */
export function tensorDataOf(tensor: tf.Tensor): TensorData {
  if (tensor.dtype === 'complex64') {
    throw new PoptfjsError('cannot save a complex64 tensor; poptfjs files hold float32, int32, bool and string tensors', { type: 'file' });
  }
  return { shape: [...tensor.shape], dtype: tensor.dtype, data: (tensor.dataSync() as ConstantData).slice() };
}

/** A tensor holding `data` (the caller owns it). */
export function tensorFromData(data: TensorData): tf.Tensor {
  return tf.tensor(data.data as tf.TensorLike, [...data.shape], data.dtype);
}
