/**
 * `BatchMatMul` for the wasm backend, batched products as one XNNPACK
 * product per matrix.
 *
 * The wasm backend computes a product with XNNPACK only when neither
 * operand is transposed and both hold a single matrix; anything else (the
 * attention products of a transformer, `[heads, rows, depth]` by
 * `[heads, depth, columns]`, or a transposed operand) runs a plain loop at
 * about 2.5 GFLOP/s: 0.8 ms for `[4, 64, 64]` by `[4, 64, 64]`. Here a
 * transposed operand is transposed once (a copy), a batch of left matrices
 * against one right matrix becomes one product of their stacked rows, and
 * other batches whose columns are a multiple of 4 run as one SIMD routine
 * over the whole batch (batch_mat_mul_simd.ts: 0.07 ms for the attention
 * product above); the rest run matrix by matrix on the fast path (each
 * right matrix is packed for XNNPACK anew, about 20 µs for 64 × 64), their
 * results concatenated: 0.15-0.2 ms for the same product. Products too small
 * for that overhead keep the backend's loop (see {@link FAST_PATH_MIN_WORK}).
 * Batch dimensions broadcast as in `tf.matMul`.
 */
import * as tf from '@tensorflow/tfjs';
import '@tensorflow/tfjs-backend-wasm';
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';
import { OwnWasmKernel } from './own_wasm_kernel.js';
import { batchMatMulSimd, simdProductFits } from './batch_mat_mul_simd.js';
import { KernelCallScope } from './kernel_call_scope.js';
import { wasmMemory } from './wasm_simd_routine.js';

const BACKEND = 'wasm';

/** The wasm backend's own `BatchMatMul` (registered by the import above), which this kernel replaces and calls. */
const OWN_BATCH_MAT_MUL = new OwnWasmKernel(tf.BatchMatMul);

/**
 * The multiply-adds per matrix (rows × depth × columns) from which a
 * product takes XNNPACK's path: below it, the copies and the packing of
 * each right matrix cost more than the backend's loop (measured on one
 * thread, `[b, n, n]` by `[b, n, n]` for b = 4 and 16: the loop wins at
 * n = 16, is about even at n = 24, and takes 2 to 6 times as long from
 * n = 32 on).
 */
export const FAST_PATH_MIN_WORK = 32 * 32 * 32;

/** The product of `dims`. */
function size(dims: readonly number[]): number {
  return dims.reduce((n, d) => n * d, 1);
}

/**
 * For each matrix of the broadcast batch `outer` (row-major), the index of
 * the matrix of an operand with batch dimensions `dims` it reads.
 */
function broadcastIndices(dims: readonly number[], outer: readonly number[]): number[] {
  const padded = [...new Array<number>(outer.length - dims.length).fill(1), ...dims];
  const indices: number[] = [];
  for (let flat = 0; flat < size(outer); flat++) {
    let rest = flat;
    let index = 0;
    let stride = 1;
    for (let axis = outer.length - 1; axis >= 0; axis--) {
      const coordinate = rest % outer[axis]!;
      rest = Math.floor(rest / outer[axis]!);
      if (padded[axis] !== 1) index += coordinate * stride;
      stride *= padded[axis]!;
    }
    indices.push(index);
  }
  return indices;
}

/** An operand as a stack of matrices `[count, rows, columns]`, transposed when asked (a copy, an intermediate of `k`). */
function matrices(k: KernelCallScope, x: tf.TensorInfo, transposed: boolean): tf.TensorInfo {
  const [rows, columns] = x.shape.slice(-2) as [number, number];
  const stacked = k.reshape(x, [size(x.shape.slice(0, -2)), rows, columns]);
  return transposed ? k.transpose(stacked, [0, 2, 1]) : stacked;
}

/**
 * The products of the stacks `left` (`[count, rows, depth]`) and `right`
 * (`[count, depth, cols]`) by the SIMD routine, as a new `outShape` tensor,
 * when each stack holds one matrix or one per product of the `count`
 * products and the sizes fit the routine; undefined otherwise or where the
 * routine cannot run.
 */
function productBySimd(backend: BackendWasm, left: tf.TensorInfo, right: tf.TensorInfo, count: number, outShape: number[]): tf.TensorInfo | undefined {
  const [countA, rows, depth] = left.shape as [number, number, number];
  const [countB, , cols] = right.shape as [number, number, number];
  const product = { batch: count, rows, depth, cols };
  if (!simdProductFits(product) || (countA !== 1 && countA !== count) || (countB !== 1 && countB !== count)) return undefined;
  const out = backend.makeOutput(outShape, 'float32');
  const address = (x: tf.TensorInfo) => backend.typedArrayFromHeap(x).byteOffset;
  const aStep = countA === 1 ? 0 : 4 * rows * depth;
  const bStep = countB === 1 ? 0 : 4 * depth * cols;
  if (batchMatMulSimd(wasmMemory(backend), address(left), address(right), address(out), product, aStep, bStep)) return out;
  backend.disposeData(out.dataId);
  return undefined;
}

function batchMatMul(args: Parameters<tf.KernelFunc>[0]): tf.TensorInfo | tf.TensorInfo[] {
  const own = OWN_BATCH_MAT_MUL.get();
  const { inputs, attrs, backend } = args;
  const { a, b } = inputs as { a: tf.TensorInfo; b: tf.TensorInfo };
  const { transposeA, transposeB } = attrs as unknown as tf.BatchMatMulAttrs;
  if (a.dtype !== 'float32' || b.dtype !== 'float32' || a.shape.length < 2 || b.shape.length < 2) return own.kernelFunc(args);
  const [rowsA, depthA] = (transposeA ? a.shape.slice(-2).reverse() : a.shape.slice(-2)) as [number, number];
  const [depthB, columns] = (transposeB ? b.shape.slice(-2).reverse() : b.shape.slice(-2)) as [number, number];
  const outerA = a.shape.slice(0, -2);
  const outerB = b.shape.slice(0, -2);
  const plain = !transposeA && !transposeB && size(outerA) === 1 && size(outerB) === 1;
  const small = rowsA * depthA * columns < FAST_PATH_MIN_WORK || size(outerA) === 0 || size(outerB) === 0;
  if (plain || small || depthA !== depthB) return own.kernelFunc(args);
  const outer = tf.broadcast_util.assertAndGetBroadcastShape(outerA, outerB);
  return KernelCallScope.run(BACKEND, backend as tf.KernelBackend, (k) => {
    const product = (left: tf.TensorInfo, right: tf.TensorInfo) => k.callKernel(own, { a: left, b: right }, { transposeA: false, transposeB: false });
    const left = matrices(k, a, transposeA);
    const right = matrices(k, b, transposeB);
    const outShape = [...outer, rowsA, columns];
    if (size(outerB) === 1 && size(outerA) === size(outer)) {
      const rows = k.reshape(left, [1, size(outerA) * rowsA, depthA]);
      return k.reshape(product(rows, right), outShape);
    }
    const bySimd = productBySimd(backend as BackendWasm, left, right, size(outer), outShape);
    if (bySimd !== undefined) return bySimd;
    const leftIndices = broadcastIndices(outerA, outer);
    const rightIndices = broadcastIndices(outerB, outer);
    const one = (x: tf.TensorInfo, index: number) => {
      const [count, rows, cols] = x.shape as [number, number, number];
      return count === 1 ? x : k.call(tf.Slice, { x }, { begin: [index, 0, 0], size: [1, rows, cols] });
    };
    const results = leftIndices.map((leftIndex, i) => product(one(left, leftIndex), one(right, rightIndices[i]!)));
    const stacked = results.length === 1 ? results[0]! : k.call(tf.Concat, results, { axis: 0 });
    return k.reshape(stacked, outShape);
  });
}

/** The wasm kernel of `BatchMatMul`: the backend's own for single plain products and small ones, a SIMD routine or per-matrix XNNPACK products otherwise. */
export const batchMatMulConfig: tf.KernelConfig = {
  kernelName: tf.BatchMatMul,
  backendName: BACKEND,
  kernelFunc: batchMatMul,
  setupFunc: (backend) => OWN_BATCH_MAT_MUL.setup(backend),
};
