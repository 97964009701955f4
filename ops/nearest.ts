/**
 * `nearest`: PopTorch's `nearest` (torch_cluster's `nearest` operator), the
 * nearest point of one set to each point of another.
 */
import * as tf from '@tensorflow/tfjs';
import { POPTFJS_KERNELS } from '../lib/backend/kernel_catalogue/kernel_catalogue.js';
import { argumentError, checkTensor } from './arguments/dynamic_offset.js';

const OP = 'nearest';

/** Checks `points` is a float32 tensor of points: [count, coordinates], or [count] for one coordinate each. */
function checkPoints(what: string, points: unknown): asserts points is tf.Tensor {
  checkTensor(OP, what, points);
  if (points.rank < 1 || points.rank > 2) throw argumentError(OP, `\`${what}\` must be a tensor of points, [count, coordinates] or [count], got ${points.rank} dimensions`);
  if (points.dtype !== 'float32') throw argumentError(OP, `\`${what}\` must be float32, got ${points.dtype}`);
}

/** The batch entries of `count` points as an int32 tensor: a list of sorted integers (checked) or an int32 tensor [count] (read when the op runs). */
function batchEntries(what: string, batch: readonly number[] | tf.Tensor, count: number): tf.Tensor {
  if (batch instanceof tf.Tensor) {
    if (batch.dtype !== 'int32' || batch.rank !== 1 || batch.shape[0] !== count)
      throw argumentError(OP, `\`${what}\` must be int32 of shape [${count}] (one entry a point), got ${batch.dtype}[${batch.shape.join(',')}]`);
    return batch;
  }
  if (!Array.isArray(batch) || !batch.every((b) => Number.isSafeInteger(b) && b >= 0))
    throw argumentError(OP, `\`${what}\` must be a list of non-negative integers or an int32 tensor`);
  if (batch.length !== count) throw argumentError(OP, `\`${what}\` has ${batch.length} entries for ${count} points`);
  if (batch.some((b, i) => i > 0 && b < batch[i - 1]!)) throw argumentError(OP, `'${what}' is not sorted`);
  return tf.tensor1d(batch, 'int32');
}

/** Checks two lists of batch entries hold the same entries, as PopTorch checks lists. */
function checkSameEntries(batchX: readonly number[], batchY: readonly number[]): void {
  const entries = (list: readonly number[]) => [...new Set(list)].join(',');
  if (entries(batchX) !== entries(batchY)) throw argumentError(OP, "some batch indices occur in 'batchX' that do not occur in 'batchY'");
}

/**
 * For each point of `x`, the index of the nearest point of `y` (by
 * Euclidean distance), as PopTorch's
 * `poptorch.nearest(x, y, batch_x, batch_y)`: `x` is float32 [N, D] (or [N], one coordinate a point), `y`
 * float32 [M, D] (or [M]); returns int32 [N], the first of equally near
 * points. With `batchX` and `batchY`, each point belongs to a batch entry
 * and its nearest is sought among the points of `y` of its own entry: given
 * as lists of sorted non-negative integers (one a point), they are checked
 * as PopTorch checks them (sorted, and the same entries in both); given as
 * int32 tensors, they are read each time the model runs, and a point of `x`
 * whose entry has no point in `y` is an error when the op runs. One list
 * given alone puts every point of the other set in entry 0. The result has a
 * zero gradient, as an ArgMin's.
 *
 * In a model it is one node, `poptfjs.Nearest`. Its cost on the simulated
 * IPU is that of PopTorch's lowering: an element-wise subtraction over the
 * N·M·D differences of the pairs of points, their squares summed to N·M
 * distances (a reduction) and a square root of each, then each point's
 * least distance (a reduction of N·M to N); the differences and the
 * distances are its temporary memory. With batch entries, PopTorch appends
 * each point's entry as one more coordinate, and so does the cost.
 */
export function nearest(x: tf.Tensor, y: tf.Tensor, batchX?: readonly number[] | tf.Tensor, batchY?: readonly number[] | tf.Tensor): tf.Tensor1D {
  checkPoints('x', x);
  checkPoints('y', y);
  const coordinates = (points: tf.Tensor) => points.shape[1] ?? 1;
  if (coordinates(x) !== coordinates(y)) throw argumentError(OP, `inputs shapes inconsistent x.shape[1]=${coordinates(x)} vs. y.shape[1]=${coordinates(y)}`);
  const [n, m] = [x.shape[0]!, y.shape[0]!];
  if (batchX === undefined && batchY === undefined) return tf.engine().runKernel(POPTFJS_KERNELS.nearest, { x, y }) as tf.Tensor1D;
  const [listX, listY] = [batchX ?? new Array<number>(n).fill(0), batchY ?? new Array<number>(m).fill(0)];
  const inputs = { x, y, batchX: batchEntries('batchX', listX, n), batchY: batchEntries('batchY', listY, m) };
  if (Array.isArray(listX) && Array.isArray(listY)) checkSameEntries(listX, listY);
  return tf.engine().runKernel(POPTFJS_KERNELS.nearest, inputs) as tf.Tensor1D;
}
