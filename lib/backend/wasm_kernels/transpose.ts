/**
 * `Transpose` for the wasm backend, on the fewest axes that describe it.
 *
 * Axes that stay next to each other, in order, move as one: turning a
 * `[1, 3, 224, 224]` channels-first image channels-last (`perm [0, 2, 3, 1]`)
 * is a `[3, 50176]` matrix transposed. The wasm backend's own kernel drops
 * axes of size one but keeps the others, and its rank-3 loop took 0.20 ms
 * for that image against 0.08 ms for the same elements as a matrix. The
 * axes are merged here. A float32 or int32 transpose that is then a matrix
 * (or a batch of matrices) swapped, with at least 4 rows and 4 columns,
 * runs as a blocked SIMD routine (transpose_simd.ts: 0.12 ms for a
 * [64, 6272] matrix, against 1.0-1.6 ms by the backend's kernel, and faster
 * from 16×16 up), and one of 3 rows (an RGB image made channels-last) by
 * a routine interleaving them (three_row_transpose_simd.ts); the others run
 * on the backend's kernel.
 */
import * as tf from '@tensorflow/tfjs';
import '@tensorflow/tfjs-backend-wasm';
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';
import { OwnWasmKernel } from './own_wasm_kernel.js';
import { threeRowTransposeSimd } from './three_row_transpose_simd.js';
import { transposeSimd } from './transpose_simd.js';
import { wasmMemory } from './wasm_simd_routine.js';

const BACKEND = 'wasm';

/** The wasm backend's own `Transpose` (registered by the import above), which this kernel replaces and calls. */
const OWN_TRANSPOSE = new OwnWasmKernel(tf.Transpose);

/**
 * `shape` and `perm` with axes of size one dropped and each run of axes
 * that `perm` keeps adjacent and in order merged into one: the input shape
 * and permutation of a transpose moving the same elements.
 */
export function mergedTranspose(shape: readonly number[], perm: readonly number[]): { shape: number[]; perm: number[] } {
  const kept = perm.filter((axis) => shape[axis] !== 1);
  const runs: number[][] = [];
  for (const axis of kept) {
    const run = runs[runs.length - 1];
    if (run !== undefined && run[run.length - 1] === axis - 1) run.push(axis);
    else runs.push([axis]);
  }
  const byInput = [...runs].sort((a, b) => a[0]! - b[0]!);
  return {
    shape: byInput.map((run) => run.reduce((n, axis) => n * shape[axis]!, 1)),
    perm: runs.map((run) => byInput.indexOf(run)),
  };
}

/** The fewest rows and columns for the SIMD routine: one whole 4×4 block (with fewer it copies one element at a time, slower than the backend's kernel). */
const MIN_SIDE = 4;

/**
 * The batch, rows and columns of a merged transpose that swaps the last
 * two axes of a matrix or batch of matrices, or undefined for other
 * permutations.
 */
export function matrixSwap(merged: { shape: readonly number[]; perm: readonly number[] }): { batch: number; rows: number; cols: number } | undefined {
  const { shape, perm } = merged;
  if (perm.length === 2 && perm[0] === 1) return { batch: 1, rows: shape[0]!, cols: shape[1]! };
  if (perm.length === 3 && perm[0] === 0 && perm[1] === 2) return { batch: shape[0]!, rows: shape[1]!, cols: shape[2]! };
  return undefined;
}

/** `x` transposed to `outShape` by a SIMD routine, or undefined where none applies or can run. */
function transposedBySimd(backend: BackendWasm, x: tf.TensorInfo, merged: { shape: number[]; perm: number[] }, outShape: number[]): tf.TensorInfo | undefined {
  const swap = matrixSwap(merged);
  if (swap === undefined || (x.dtype !== 'float32' && x.dtype !== 'int32') || swap.batch < 1 || swap.cols < MIN_SIDE) return undefined;
  const threeRows = swap.rows === 3;
  if (!threeRows && swap.rows < MIN_SIDE) return undefined;
  const out = backend.makeOutput(outShape, x.dtype);
  const src = backend.typedArrayFromHeap(x).byteOffset;
  const dst = backend.typedArrayFromHeap(out).byteOffset;
  const memory = wasmMemory(backend);
  const done = threeRows ? threeRowTransposeSimd(memory, src, dst, swap.batch, swap.cols) : transposeSimd(memory, src, dst, swap.batch, swap.rows, swap.cols);
  if (done) return out;
  backend.disposeData(out.dataId);
  return undefined;
}

function transpose(args: Parameters<tf.KernelFunc>[0]): tf.TensorInfo | tf.TensorInfo[] {
  const own = OWN_TRANSPOSE.get();
  const { x } = args.inputs as { x: tf.TensorInfo };
  const { perm } = args.attrs as unknown as tf.TransposeAttrs;
  const merged = mergedTranspose(x.shape, perm);
  const backend = args.backend as BackendWasm;
  const outShape = perm.map((axis) => x.shape[axis]!);
  const bySimd = transposedBySimd(backend, x, merged, outShape);
  if (bySimd !== undefined) return bySimd;
  if (merged.shape.length === x.shape.filter((d) => d !== 1).length) return own.kernelFunc(args);
  const out = own.kernelFunc({ inputs: { x: { ...x, shape: merged.shape } }, attrs: { perm: merged.perm }, backend }) as tf.TensorInfo;
  backend.dataIdMap.get(out.dataId)!.shape = outShape;
  return { ...out, shape: outShape };
}

/** The wasm kernel of `Transpose`: on merged axes, SIMD routines for matrices of 4-byte elements, else the backend's own kernel. */
export const transposeConfig: tf.KernelConfig = {
  kernelName: tf.Transpose,
  backendName: BACKEND,
  kernelFunc: transpose,
  setupFunc: (backend) => OWN_TRANSPOSE.setup(backend),
};
