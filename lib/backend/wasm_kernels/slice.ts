/**
 * `Slice` for the wasm backend, reading its input where it lies.
 *
 * The wasm backend's own `Slice` starts by copying its whole input out of
 * the wasm heap (`readSync`), whatever part it keeps: taking the query, key
 * and value thirds of a transformer's `[64, 1, 768]` projection cost 85 µs a
 * third, and each head's matrix of a `[4, 64, 64]` stack 39 µs. This one
 * copies only the elements it keeps, in runs as long as the slice allows
 * (the slice's trailing whole axes and the axis before them), straight from
 * the input's memory: 6 and 2 µs. String tensors keep the backend's kernel.
 */
import * as tf from '@tensorflow/tfjs';
import '@tensorflow/tfjs-backend-wasm';
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';
import { OwnWasmKernel } from './own_wasm_kernel.js';

const BACKEND = 'wasm';

/** The wasm backend's own `Slice` (registered by the import above), kept for string tensors. */
const OWN_SLICE = new OwnWasmKernel(tf.Slice);

/** Runs shorter than this are copied element by element (a typed-array `set` per run costs more). */
const SHORT_RUN = 16;

/**
 * Copies the block `begin`/`size` of `x` (shape `shape`) into `out`, in
 * runs of `run` contiguous elements: `size`'s axes from `runAxis` on.
 */
function copyBlock(x: tf.TypedArray, shape: readonly number[], begin: readonly number[], size: readonly number[], out: tf.TypedArray): void {
  const rank = shape.length;
  const strides = tf.util.computeStrides([...shape]);
  let runAxis = rank - 1;
  while (runAxis > 0 && size[runAxis] === shape[runAxis]) runAxis--;
  const run = size.slice(runAxis).reduce((n, d) => n * d, 1);
  const outer = size.slice(0, runAxis);
  const count = outer.reduce((n, d) => n * d, 1);
  const index = new Array<number>(runAxis).fill(0);
  let at = 0;
  for (let r = 0; r < count; r++) {
    let from = begin[runAxis]! * (runAxis < rank - 1 ? strides[runAxis]! : 1);
    for (let axis = 0; axis < runAxis; axis++) from += (begin[axis]! + index[axis]!) * strides[axis]!;
    if (run < SHORT_RUN) for (let i = 0; i < run; i++) out[at + i] = x[from + i]!;
    else out.set(x.subarray(from, from + run), at);
    at += run;
    for (let axis = runAxis - 1; axis >= 0; axis--) {
      if (++index[axis]! < outer[axis]!) break;
      index[axis] = 0;
    }
  }
}

function slice(args: Parameters<tf.KernelFunc>[0]): tf.TensorInfo | tf.TensorInfo[] {
  const { inputs, attrs } = args;
  const { x } = inputs as { x: tf.TensorInfo };
  if (x.dtype === 'string') {
    return OWN_SLICE.get().kernelFunc(args);
  }
  const backend = args.backend as BackendWasm;
  const { begin, size } = attrs as unknown as tf.SliceAttrs;
  const [begin_, size_] = tf.slice_util.parseSliceParams(x, begin, size) as [number[], number[]];
  const out = backend.makeOutput(size_, x.dtype);
  if (size_.some((d) => d === 0)) return out;
  if (x.shape.length === 0) {
    backend.typedArrayFromHeap(out).set(backend.typedArrayFromHeap(x));
    return out;
  }
  copyBlock(backend.typedArrayFromHeap(x), x.shape, begin_, size_, backend.typedArrayFromHeap(out));
  return out;
}

/** The wasm kernel of `Slice`: copies only the kept elements, from the input's memory. */
export const sliceConfig: tf.KernelConfig = {
  kernelName: tf.Slice,
  backendName: BACKEND,
  kernelFunc: slice,
};
