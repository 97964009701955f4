/**
 * The transposes of 4-byte elements that the wasm `Transpose` runs by its
 * SIMD routine (and a few beside it), checked bit for bit against the cpu
 * backend's kernel on whichever wasm build is active.
 */
import * as tf from '@tensorflow/tfjs';
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';
import { expect, it } from 'vitest';
import { transposeSimd } from '../../../lib/backend/wasm_kernels/transpose_simd.js';
import { wasmMemory } from '../../../lib/backend/wasm_kernels/wasm_simd_routine.js';
import { randomTensor, runCpuKernel, runKernel } from './kernel_reference.js';

/** Matrices and batches of matrices: whole 4×4 blocks, partial ones, strips of 64 rows, sides below 4, and three rows (RGB images made channels-last). */
const CASES: readonly { shape: number[]; perm: number[] }[] = [
  { shape: [64, 6272], perm: [1, 0] },
  { shape: [6272, 64], perm: [1, 0] },
  { shape: [4, 4], perm: [1, 0] },
  { shape: [7, 9], perm: [1, 0] },
  { shape: [4, 37], perm: [1, 0] },
  { shape: [37, 5], perm: [1, 0] },
  { shape: [130, 67], perm: [1, 0] },
  { shape: [1, 37], perm: [1, 0] },
  { shape: [37, 1], perm: [1, 0] },
  { shape: [3, 50], perm: [1, 0] },
  { shape: [50, 3], perm: [1, 0] },
  { shape: [3, 13, 6], perm: [0, 2, 1] },
  { shape: [2, 3, 5, 7, 4], perm: [0, 1, 4, 2, 3] },
  { shape: [5, 1, 8, 9], perm: [0, 3, 1, 2] },
  { shape: [1, 3, 224, 224], perm: [0, 2, 3, 1] },
  { shape: [2, 3, 5, 7], perm: [0, 2, 3, 1] },
  { shape: [3, 4], perm: [1, 0] },
];

/** The first element whose bits differ (a transpose moves values: NaN and -0 included), or -1 if none does. */
function firstDifference(actual: tf.TypedArray, expected: tf.TypedArray): number {
  const a = new Int32Array(actual.buffer, actual.byteOffset, actual.length);
  const e = new Int32Array(expected.buffer, expected.byteOffset, expected.length);
  if (a.length !== e.length) return Math.min(a.length, e.length);
  return a.findIndex((v, i) => v !== e[i]);
}

function input(shape: number[], dtype: 'float32' | 'int32', seed: number): tf.Tensor {
  if (dtype === 'int32') return tf.randomUniform(shape, -1e9, 1e9, 'int32', seed);
  const x = randomTensor(shape, seed);
  const values = x.dataSync().slice();
  values[0] = Number.NaN;
  values[values.length - 1] = -0;
  x.dispose();
  return tf.tensor(values, shape);
}

/** Declares the tests (inside a `describe` whose `beforeAll` made the wasm build under test active). */
export function transposeOfFourByteElementsTests(): void {
  for (const dtype of ['float32', 'int32'] as const) {
    CASES.forEach(({ shape, perm }, i) => {
      it(`permutes a ${dtype} [${shape}] tensor by [${perm}] as the cpu backend does, bit for bit`, () => {
        const x = input(shape, dtype, i + 1);
        const expected = runCpuKernel('Transpose', { x }, { perm });
        const out = runKernel('Transpose', { x }, { perm });
        expect(out.shape).toEqual(expected.shape);
        expect(out.dtype).toBe(dtype);
        expect(firstDifference(out.dataSync(), expected.values)).toBe(-1);
        tf.dispose([x, out]);
      });
    });
  }

  it('runs its SIMD routine on the memory of the active build, batch by batch', () => {
    const wasm = tf.backend() as BackendWasm;
    const x = input([2, 9, 6], 'float32', 7);
    const out = wasm.makeOutput([2, 6, 9], 'float32');
    const dst = wasm.typedArrayFromHeap(out);
    expect(transposeSimd(wasmMemory(wasm), wasm.typedArrayFromHeap(x).byteOffset, dst.byteOffset, 2, 9, 6)).toBe(true);
    expect(firstDifference(dst, runCpuKernel('Transpose', { x }, { perm: [0, 2, 1] }).values)).toBe(-1);
    wasm.disposeData(out.dataId);
    x.dispose();
  });
}
