/**
 * Host buffers and tensors: the typed array of a tensor's elements (bool as
 * `Uint8Array`), and a tensor made from one.
 */
import * as tf from '@tensorflow/tfjs';
import type { HostBuffer } from './engine_streams.js';

/** A tensor of `shape` and `dtype` holding a copy of `data`. */
export function hostTensor(data: HostBuffer, shape: readonly number[], dtype: tf.DataType): tf.Tensor {
  if (dtype === 'bool')
    return tf.tensor(
      Array.from(data, (x) => x !== 0),
      [...shape],
      'bool',
    );
  return tf.tensor(data.slice(), [...shape], dtype);
}

/** The elements of `t` as the buffer of its dtype (`Uint8Array` for bool). */
export function tensorBuffer(t: tf.Tensor): HostBuffer {
  const data = t.dataSync();
  if (t.dtype === 'bool') return Uint8Array.from(data as ArrayLike<number>);
  return data as Float32Array | Int32Array;
}
