/**
 * The wasm `GatherV2` with batch dimensions (tfjs 4.22's own reads other
 * samples' indices: tensorflow/tfjs#8658), against the cpu backend's kernel
 * over batch dimensions, axes, repeated picks and dtypes.
 */
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { randomTensor, runCpuKernel, runKernel, useWasmTrainingBackend } from './kernel_reference.js';

/** Index values of `shape`, each below `rows`, with repeats. */
function indicesOf(shape: number[], rows: number): tf.Tensor {
  const size = shape.reduce((n, d) => n * d, 1);
  return tf.tensor(
    Array.from({ length: size }, (_, i) => (i * 5 + 3) % rows),
    shape,
    'int32',
  );
}

const CASES: readonly { x: number[]; indices: number[]; axis: number; batchDims: number }[] = [
  // BERT's masked tokens: 9 samples of 6 tokens, 3 picked each (tfjs's own kernel fails on this one).
  { x: [9, 6, 5], indices: [9, 3], axis: 1, batchDims: 1 },
  { x: [4, 128, 16], indices: [4, 20], axis: 1, batchDims: 1 },
  { x: [3, 6, 5], indices: [3, 2], axis: 2, batchDims: 1 },
  { x: [2, 3, 7, 4], indices: [2, 3, 5], axis: 2, batchDims: 2 },
  { x: [5, 8], indices: [5, 4], axis: 1, batchDims: 1 },
  { x: [6, 4], indices: [3], axis: 0, batchDims: 0 },
];

describe('wasm GatherV2', () => {
  beforeAll(useWasmTrainingBackend);

  CASES.forEach(({ x: shape, indices: indexShape, axis, batchDims }, i) => {
    it(`gathers [${indexShape}] from a [${shape}] tensor along axis ${axis} with ${batchDims} batch dimension(s) as the cpu backend does`, () => {
      const x = randomTensor(shape, i + 1);
      const indices = indicesOf(indexShape, shape[axis]!);
      const expected = runCpuKernel('GatherV2', { x, indices }, { axis, batchDims });
      const picked = runKernel('GatherV2', { x, indices }, { axis, batchDims });
      expect(picked.shape).toEqual(expected.shape);
      expect(picked.dataSync()).toEqual(expected.values);
      tf.dispose([x, indices, picked]);
    });
  });

  it('gathers int32 and bool tensors with a batch dimension', () => {
    const ints = tf.range(0, 24, 1, 'int32').reshape([4, 6]);
    const indices = tf.tensor2d(
      [
        [5, 0],
        [1, 1],
        [2, 3],
        [0, 4],
      ],
      [4, 2],
      'int32',
    );
    expect(runKernel('GatherV2', { x: ints, indices }, { axis: 1, batchDims: 1 }).arraySync()).toEqual([
      [5, 0],
      [7, 7],
      [14, 15],
      [18, 22],
    ]);
    const flags = tf.tensor2d(
      [
        [true, false],
        [false, true],
      ],
      [2, 2],
      'bool',
    );
    const picks = tf.tensor2d([[1], [1]], [2, 1], 'int32');
    expect(runKernel('GatherV2', { x: flags, indices: picks }, { axis: 1, batchDims: 1 }).arraySync()).toEqual([[0], [1]]);
  });

  it('names an index out of range, as the backend does', () => {
    const x = randomTensor([2, 3, 4], 9);
    const indices = tf.tensor2d([[0], [3]], [2, 1], 'int32');
    expect(() => runKernel('GatherV2', { x, indices }, { axis: 1, batchDims: 1 })).toThrow('GatherV2: the index value 3 is not in [0, 2]');
  });
});
