/**
 * `UnsortedSegmentSum` for the wasm backend, as one `ScatterNd`.
 *
 * `x` is seen as `[n, d]` rows (`n` the number of segment ids, `d` the size of
 * what follows them in `x`'s shape), and `ScatterNd` adds each row into the
 * output row its id names, summing duplicates, in O(n·d). Ids outside
 * `[0, numSegments)` are dropped, as in TensorFlow: when any is present, they
 * are sent to a spare last row that is sliced off. The output has the dtype
 * of a sum of `x` (int32 for int32 and bool), as in TensorFlow and the webgl
 * backend; segment ids of any rank are supported.
 */
import * as tf from '@tensorflow/tfjs';
import { KernelCallScope } from './kernel_call_scope.js';

const BACKEND = 'wasm';

function scalarOf(backend: tf.KernelBackend, info: tf.TensorInfo): number {
  return (backend.readSync(info.dataId) as Int32Array)[0]!;
}

function unsortedSegmentSum({ inputs, attrs, backend }: Parameters<tf.KernelFunc>[0]): tf.TensorInfo {
  const { x, segmentIds } = inputs as { x: tf.TensorInfo; segmentIds: tf.TensorInfo };
  const { numSegments } = attrs as unknown as tf.UnsortedSegmentSumAttrs;
  const kernelBackend = backend as tf.KernelBackend;
  const rows = tf.util.sizeFromShape(segmentIds.shape);
  const rowShape = x.shape.slice(segmentIds.shape.length);
  const rowSize = tf.util.sizeFromShape(rowShape);
  const outShape = [numSegments, ...rowShape];
  const dtype = tf.sumOutType(x.dtype);
  return KernelCallScope.run(BACKEND, kernelBackend, (k) => {
    if (rows === 0 || rowSize === 0 || numSegments === 0) {
      return k.call(tf.Fill, {}, { shape: outShape, value: 0, dtype });
    }
    const values = x.dtype === dtype ? x : k.call(tf.Cast, { x }, { dtype });
    const updates = k.reshape(values, [rows, rowSize]);
    const ids = k.reshape(segmentIds, [rows, 1]);
    const allAxes = { axis: [0, 1], keepDims: false };
    const inRange = scalarOf(kernelBackend, k.call(tf.Min, { x: ids }, allAxes)) >= 0 && scalarOf(kernelBackend, k.call(tf.Max, { x: ids }, allAxes)) < numSegments;
    if (inRange) {
      return k.reshape(k.call(tf.ScatterNd, { indices: ids, updates }, { shape: [numSegments, rowSize] }), outShape);
    }
    const zero = k.call(tf.Fill, {}, { shape: [], value: 0, dtype: 'int32' });
    const count = k.call(tf.Fill, {}, { shape: [], value: numSegments, dtype: 'int32' });
    const valid = k.call(tf.LogicalAnd, {
      a: k.call(tf.GreaterEqual, { a: ids, b: zero }),
      b: k.call(tf.Less, { a: ids, b: count }),
    });
    const spare = k.call(tf.Fill, {}, { shape: [rows, 1], value: numSegments, dtype: 'int32' });
    const safeIds = k.call(tf.Select, { condition: valid, t: ids, e: spare });
    const withSpare = k.call(tf.ScatterNd, { indices: safeIds, updates }, { shape: [numSegments + 1, rowSize] });
    const sums = k.call(tf.Slice, { x: withSpare }, { begin: [0, 0], size: [numSegments, rowSize] });
    return k.reshape(sums, outShape);
  });
}

/** The wasm kernel of `UnsortedSegmentSum` (the gradient of `tf.gather`, e.g. of an embedding). */
export const unsortedSegmentSumConfig: tf.KernelConfig = {
  kernelName: tf.UnsortedSegmentSum,
  backendName: BACKEND,
  kernelFunc: unsortedSegmentSum,
};
