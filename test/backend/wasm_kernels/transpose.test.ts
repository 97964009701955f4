/**
 * The wasm `Transpose` on merged axes against the cpu backend's kernel, and
 * the merging itself.
 */
import * as tf from '@tensorflow/tfjs';
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';
import { beforeAll, describe, expect, it } from 'vitest';
import { matrixSwap, mergedTranspose } from '../../../lib/backend/wasm_kernels/transpose.js';
import { randomTensor, runCpuKernel, runKernel, useWasmTrainingBackend } from './kernel_reference.js';
import { transposeOfFourByteElementsTests } from './transpose_cases.js';

const CASES: readonly { shape: number[]; perm: number[] }[] = [
  { shape: [1, 3, 224, 224], perm: [0, 2, 3, 1] },
  { shape: [2, 3, 5, 7], perm: [0, 3, 1, 2] },
  { shape: [1, 64, 256], perm: [1, 0, 2] },
  { shape: [4, 6, 5, 3, 2], perm: [2, 3, 4, 0, 1] },
  { shape: [64, 4, 64], perm: [1, 0, 2] },
  { shape: [3, 1, 4, 1, 5], perm: [4, 1, 0, 3, 2] },
  { shape: [6, 7], perm: [1, 0] },
];

describe('wasm Transpose', () => {
  beforeAll(useWasmTrainingBackend);

  it('merges the axes that stay adjacent and in order, and drops those of size one', () => {
    expect(mergedTranspose([1, 3, 224, 224], [0, 2, 3, 1])).toEqual({ shape: [3, 50176], perm: [1, 0] });
    expect(mergedTranspose([4, 6, 5, 3, 2], [2, 3, 4, 0, 1])).toEqual({ shape: [24, 30], perm: [1, 0] });
    expect(mergedTranspose([1, 64, 256], [1, 0, 2])).toEqual({ shape: [16384], perm: [0] });
    expect(mergedTranspose([64, 4, 64], [1, 0, 2])).toEqual({ shape: [64, 4, 64], perm: [1, 0, 2] });
  });

  it('finds the matrices whose rows and columns a merged transpose swaps', () => {
    expect(matrixSwap(mergedTranspose([64, 6272], [1, 0]))).toEqual({ batch: 1, rows: 64, cols: 6272 });
    expect(matrixSwap(mergedTranspose([2, 3, 5, 7, 4], [0, 1, 4, 2, 3]))).toEqual({ batch: 6, rows: 35, cols: 4 });
    expect(matrixSwap(mergedTranspose([1, 64, 256], [1, 0, 2]))).toBeUndefined();
    expect(matrixSwap(mergedTranspose([64, 4, 64], [1, 0, 2]))).toBeUndefined();
    expect(matrixSwap(mergedTranspose([2, 3, 4], [2, 1, 0]))).toBeUndefined();
  });

  transposeOfFourByteElementsTests();

  CASES.forEach(({ shape, perm }, i) => {
    it(`permutes a [${shape}] tensor by [${perm}] as the cpu backend does`, () => {
      const x = randomTensor(shape, i + 1);
      const expected = runCpuKernel('Transpose', { x }, { perm });
      const dataBefore = tf.backend().numDataIds();
      const out = runKernel('Transpose', { x }, { perm });
      expect(tf.backend().numDataIds()).toBe(dataBefore + 1);
      expect(out.shape).toEqual(expected.shape);
      expect(out.dataSync()).toEqual(expected.values);
      tf.dispose([x, out]);
    });
  });

  it('permutes int32 and bool tensors, and records the shape of its result with the backend', () => {
    const ints = tf.range(0, 12, 1, 'int32').reshape([2, 3, 2]);
    const turned = runKernel('Transpose', { x: ints }, { perm: [2, 0, 1] });
    expect(turned.dtype).toBe('int32');
    expect(turned.arraySync()).toEqual([
      [
        [0, 2, 4],
        [6, 8, 10],
      ],
      [
        [1, 3, 5],
        [7, 9, 11],
      ],
    ]);
    expect(runKernel('Transpose', { x: tf.tensor([true, false], [1, 2], 'bool') }, { perm: [1, 0] }).arraySync()).toEqual([[1], [0]]);
    const backend = tf.backend() as BackendWasm;
    expect(backend.dataIdMap.get(turned.dataId)!.shape).toEqual([2, 2, 3]);
  });
});
