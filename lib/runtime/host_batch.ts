/**
 * The host side of one call: its inputs, from which each micro-batch is
 * copied, and the outputs the host gets when synthetic data does not copy
 * them back.
 */
import * as tf from '@tensorflow/tfjs';

/**
 * The (device) inputs of one call, from which each micro-batch is copied.
 * Their elements are read once per call: the wasm backend's slice kernel
 * reads the whole tensor for every slice, which made splitting a batch into
 * many micro-batches cost the whole batch per micro-batch.
 */
export class HostBatch {
  private readonly data: Array<tf.TypedArray | undefined> = [];

  constructor(readonly tensors: readonly tf.Tensor[]) {}

  /** `size` samples of input `i` from sample `start` on (the same values `tf.slice` gives). */
  slice(i: number, start: number, size: number): tf.Tensor {
    const x = this.tensors[i]!;
    if (x.dtype !== 'float32' && x.dtype !== 'int32' && x.dtype !== 'bool') return tf.slice(x, [start], [size]);
    const data = (this.data[i] ??= x.dataSync() as tf.TypedArray);
    const row = x.shape.slice(1).reduce((a, b) => a * b, 1);
    return tf.tensor(data.subarray(start * row, (start + size) * row), [size, ...x.shape.slice(1)], x.dtype);
  }
}

/**
 * What the host gets of outputs that synthetic data does not copy back:
 * zeros in their shapes, as PopTorch returns (the device's values are disposed).
 */
export function notCopiedBack(outputs: tf.Tensor[]): tf.Tensor[] {
  return outputs.map((t) => {
    const zeros = tf.zeros(t.shape, t.dtype);
    t.dispose();
    return zeros;
  });
}
