/**
 * The kernel of `ops.nearest`: PopTorch's `nearest` (torch_cluster's
 * `nearest`), for each point of `x` the index of the nearest point of `y` by
 * Euclidean distance, among the points of `y` in the same batch entry.
 *
 * Inputs `x` (float32 [N, D], or [N] for points of one coordinate) and `y`
 * (float32 [M, D] or [M]), and, for points in several batch entries, `batchX`
 * (int32 [N]) and `batchY` (int32 [M]), each point's entry. Output int32 [N]:
 * the index in `y` of each point's nearest, the first of equally near ones (as
 * an ArgMin takes the first). A point whose batch entry has no point in `y`
 * is an error when the kernel runs. Its gradient is zero: the indices do not
 * change as the points move a little (tfjs's `ArgMin` has the same).
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../../common/errors.js';
import type { HostKernel } from './backend_kernel.js';

/** The kernel name of `ops.nearest`. */
export const NEAREST = 'poptfjs.Nearest';

/** The squared distance between point `i` of `xs` and point `j` of `ys`, both of `d` coordinates. */
function squaredDistance(xs: Float32Array, i: number, ys: Float32Array, j: number, d: number): number {
  let sum = 0;
  for (let k = 0; k < d; k++) {
    const difference = xs[i * d + k]! - ys[j * d + k]!;
    sum += difference * difference;
  }
  return sum;
}

function nearestKernel(): tf.KernelFunc {
  return ({ inputs, backend }) => {
    const device = backend as tf.KernelBackend;
    const { x, y, batchX, batchY } = inputs;
    const [n, d = 1] = x!.shape;
    const m = y!.shape[0]!;
    const xs = device.readSync(x!.dataId) as Float32Array;
    const ys = device.readSync(y!.dataId) as Float32Array;
    const entryX = batchX ? (device.readSync(batchX.dataId) as Int32Array) : undefined;
    const entryY = batchY ? (device.readSync(batchY.dataId) as Int32Array) : undefined;
    const indices = new Int32Array(n!);
    for (let i = 0; i < n!; i++) {
      let best = -1;
      let bestDistance = Infinity;
      for (let j = 0; j < m; j++) {
        if (entryX && entryX[i] !== entryY![j]) continue;
        const distance = squaredDistance(xs, i, ys, j, d);
        if (best === -1 || distance < bestDistance) [best, bestDistance] = [j, distance];
      }
      if (best === -1) {
        throw new PoptfjsError(`nearest: point ${i} of x is in batch entry ${entryX![i]}, in which y has no point`, { type: 'runtime', location: 'nearest' });
      }
      indices[i] = best;
    }
    return tf.tensor1d(indices, 'int32');
  };
}

const nearestGradient: tf.GradConfig = {
  kernelName: NEAREST,
  inputsToSave: ['x', 'y'],
  gradFunc: (_dy, saved) => {
    const [x, y] = saved as tf.Tensor[];
    return { x: () => tf.zerosLike(x!), y: () => tf.zerosLike(y!) };
  },
};

/** `ops.nearest`: the index of each point of `x`'s nearest point of `y` (in its batch entry); a zero gradient. */
export const NEAREST_KERNEL: HostKernel = { kernelName: NEAREST, kernelFunc: nearestKernel, gradient: nearestGradient };
