/**
 * `GatherV2` for the wasm backend with batch dimensions.
 *
 * tfjs 4.22's wasm `Gather` reads sample `b`'s indices from `b × batchSize`
 * where they start at `b × (indices per sample)`
 * (tensorflow/tfjs#8658, fix proposed in #8659): with batch dimensions it
 * gathers other samples' rows, or reads past the indices and fails with
 * "memory access out of bounds" (`tf.gather(x, indices, 1, 1)` on a
 * `[9, 6, 5]` input). BERT picks its masked tokens that way. A gather with
 * batch dimensions is done here instead: `x` is seen as
 * `[batch, outer, rows, slice]`, the indices as `[batch, picks]`, and each
 * picked row of `slice` elements is copied from `x`'s memory to the output's.
 * A gather without batch dimensions keeps the backend's kernel.
 */
import * as tf from '@tensorflow/tfjs';
import '@tensorflow/tfjs-backend-wasm';
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';
import { OwnWasmKernel } from './own_wasm_kernel.js';

const BACKEND = 'wasm';

/** The wasm backend's own `GatherV2` (registered by the import above), kept for gathers without batch dimensions. */
const OWN_GATHER = new OwnWasmKernel(tf.GatherV2);

/** The sizes of a gather with batch dimensions. */
interface BatchedGather {
  readonly batch: number;
  readonly outer: number;
  readonly rows: number;
  readonly picks: number;
  readonly slice: number;
}

/** Copies the picked rows: `out[b, o, j, :] = x[b, o, indices[b, j], :]`. */
function copyPickedRows(x: tf.TypedArray, indices: Int32Array, g: BatchedGather, out: tf.TypedArray): void {
  let at = 0;
  for (let b = 0; b < g.batch; b++) {
    for (let o = 0; o < g.outer; o++) {
      const base = (b * g.outer + o) * g.rows;
      for (let j = 0; j < g.picks; j++) {
        const from = (base + indices[b * g.picks + j]!) * g.slice;
        out.set(x.subarray(from, from + g.slice), at);
        at += g.slice;
      }
    }
  }
}

function gatherV2(args: Parameters<tf.KernelFunc>[0]): tf.TensorInfo | tf.TensorInfo[] {
  const { inputs, attrs } = args;
  const { x, indices } = inputs as { x: tf.TensorInfo; indices: tf.TensorInfo };
  const { axis, batchDims } = attrs as unknown as tf.GatherV2Attrs;
  if (batchDims === 0 || x.dtype === 'string') return OWN_GATHER.get().kernelFunc(args);
  const backend = args.backend as BackendWasm;
  const parsedAxis = tf.util.parseAxisParam(axis, x.shape)[0]!;
  const indexValues = backend.readSync(indices.dataId) as Int32Array;
  const rows = x.shape[parsedAxis]!;
  for (const index of indexValues) tf.util.assert(index <= rows - 1 && index >= 0, () => `GatherV2: the index value ${index} is not in [0, ${rows - 1}]`);
  const info = tf.backend_util.segment_util.collectGatherOpShapeInfo(x as tf.TensorInfo as tf.Tensor, indices as tf.TensorInfo as tf.Tensor, parsedAxis, batchDims);
  const out = backend.makeOutput(info.outputShape, x.dtype);
  if (tf.util.sizeFromShape(info.outputShape) === 0) return out;
  const sizes: BatchedGather = { batch: info.batchSize, outer: info.outerSize, rows: info.dimSize, picks: indexValues.length / info.batchSize, slice: info.sliceSize };
  copyPickedRows(backend.typedArrayFromHeap(x), indexValues, sizes, backend.typedArrayFromHeap(out));
  return out;
}

/** The wasm kernel of `GatherV2`: gathers with batch dimensions by copying rows, the others by the backend's kernel. */
export const gatherV2Config: tf.KernelConfig = {
  kernelName: tf.GatherV2,
  backendName: BACKEND,
  kernelFunc: gatherV2,
  setupFunc: (backend) => OWN_GATHER.setup(backend),
};
