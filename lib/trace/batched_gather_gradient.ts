/**
 * The gradient of a batched gather (`tf.gather(x, indices, 1, 1)`: each
 * sample picks rows of its own slice of `x`) as one scatter-add, for the
 * traced backward pass.
 *
 * tfjs's own gradient (tfjs-core/src/gradients/GatherV2_grad.ts) splits the
 * batch and scatters each sample apart, so a traced step had a slice, a
 * scatter and a transpose per sample: a graph that grows with the
 * micro-batch and costs the device a kernel per sample. This one offsets each
 * sample's indices by the first row of its slice in the flattened `x` and
 * adds every sample's gradient in one `UnsortedSegmentSum`, as PopART's
 * GatherGrad adds them in one `multiUpdateAdd`. Each row of the result sums
 * the same gradients in the same order as tfjs's. A gather along another
 * axis, or with more batch dimensions, keeps tfjs's gradient.
 */
import * as tf from '@tensorflow/tfjs';

/** The gradient of `GatherV2` with `batchDims` 1 along axis 1, else `fallback`'s. */
function batchedGatherGradient(fallback: tf.GradConfig): tf.GradConfig {
  return {
    kernelName: 'GatherV2',
    inputsToSave: ['x', 'indices'],
    gradFunc: (dy, saved, attrs) => {
      const [x, indices] = saved as [tf.Tensor, tf.Tensor];
      const { axis, batchDims } = attrs as unknown as { axis: number; batchDims: number };
      if (batchDims !== 1 || tf.util.parseAxisParam(axis, x.shape)[0] !== 1) return fallback.gradFunc(dy, saved, attrs);
      const scatterAdded = () => {
        const [batch, rows] = x.shape as [number, number];
        const firstRows = tf.reshape(tf.range(0, batch * rows, rows, 'int32'), [batch, ...indices.shape.slice(1).map(() => 1)]);
        const flatIndices = tf.reshape(tf.add(indices, firstRows), [indices.size]) as tf.Tensor1D;
        const values = tf.reshape(dy as tf.Tensor, [indices.size, ...x.shape.slice(2)]);
        return tf.reshape(tf.unsortedSegmentSum(values, flatIndices, batch * rows), x.shape);
      };
      return { x: scatterAdded, indices: () => indices };
    },
  };
}

/** Runs `differentiate` with the batched gather gradient in tfjs's registry, then tfjs's own again. */
export function withBatchedGatherGradient<T>(differentiate: () => T): T {
  const own = tf.getGradient('GatherV2');
  if (own === undefined) return differentiate();
  tf.registerGradient(batchedGatherGradient(own));
  try {
    return differentiate();
  } finally {
    tf.registerGradient(own);
  }
}
