/**
 * The wasm `Slice`, which copies only the elements it keeps, against the
 * cpu backend's kernel over ranks, bounds and dtypes.
 */
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { randomTensor, runCpuKernel, runKernel, useWasmTrainingBackend } from './kernel_reference.js';

const CASES: readonly { shape: number[]; begin: number[]; size: number[] }[] = [
  { shape: [64, 1, 768], begin: [0, 0, 256], size: [64, 1, 256] },
  { shape: [4, 64, 64], begin: [2, 0, 0], size: [1, 64, 64] },
  { shape: [10], begin: [3], size: [5] },
  { shape: [7, 9], begin: [2, 1], size: [3, 7] },
  { shape: [7, 40], begin: [1, 3], size: [-1, 30] },
  { shape: [3, 5, 6, 4], begin: [1, 1, 0, 0], size: [2, 3, 6, 4] },
  { shape: [3, 5, 6, 4], begin: [0, 2, 1, 3], size: [3, 2, 4, 1] },
  { shape: [2, 3, 4, 5, 6], begin: [1, 0, 2, 1, 0], size: [1, 3, 2, 4, 6] },
  { shape: [5, 6], begin: [2, 0], size: [0, 6] },
];

describe('wasm Slice', () => {
  beforeAll(useWasmTrainingBackend);

  CASES.forEach(({ shape, begin, size }, i) => {
    it(`takes begin [${begin}] size [${size}] of a [${shape}] tensor as the cpu backend does`, () => {
      const x = randomTensor(shape, i + 1);
      const expected = runCpuKernel('Slice', { x }, { begin, size });
      const part = runKernel('Slice', { x }, { begin, size });
      expect(part.shape).toEqual(expected.shape);
      expect(part.dataSync()).toEqual(expected.values);
      tf.dispose([x, part]);
    });
  });

  it('slices int32 and bool tensors, and scalars', () => {
    const ints = tf.range(0, 24, 1, 'int32').reshape([2, 3, 4]);
    expect(runKernel('Slice', { x: ints }, { begin: [1, 1, 1], size: [1, 2, 2] }).arraySync()).toEqual([
      [
        [17, 18],
        [21, 22],
      ],
    ]);
    const flags = tf.tensor([true, false, true, true], [4], 'bool');
    const kept = runKernel('Slice', { x: flags }, { begin: [1], size: [2] });
    expect(kept.dtype).toBe('bool');
    expect(Array.from(kept.dataSync())).toEqual([0, 1]);
    expect(runKernel('Slice', { x: tf.scalar(5) }, { begin: [], size: [] }).arraySync()).toBe(5);
  });

  it("slices string tensors with the backend's own kernel", () => {
    const words = tf.tensor(['a', 'b', 'c', 'd'], [2, 2], 'string');
    expect(runKernel('Slice', { x: words }, { begin: [0, 1], size: [2, 1] }).arraySync()).toEqual([['b'], ['d']]);
  });
});
