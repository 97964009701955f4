/**
 * The wasm `Concat` (parts of rows copied within the heap by a SIMD routine, or a stack and a
 * transpose) against the cpu backend's kernel over axes, input counts,
 * part widths and dtypes.
 */
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { randomTensor, runCpuKernel, useWasmTrainingBackend } from './kernel_reference.js';

const CASES: readonly { shapes: number[][]; axis: number }[] = [
  {
    shapes: [
      [3, 5, 40],
      [3, 5, 48],
      [3, 5, 32],
    ],
    axis: 2,
  },
  {
    shapes: [
      [2, 4, 8, 8],
      [2, 2, 8, 8],
    ],
    axis: 1,
  },
  {
    shapes: [
      [1, 55, 55, 64],
      [1, 55, 55, 64],
    ],
    axis: 3,
  },
  {
    shapes: [
      [1000, 8],
      [1000, 8],
      [1000, 8],
    ],
    axis: 1,
  },
  {
    shapes: [
      [2, 3, 4, 5],
      [2, 3, 4, 5],
    ],
    axis: 1,
  },
  {
    shapes: [
      [2, 3, 4, 5],
      [2, 3, 4, 5],
      [2, 3, 4, 5],
      [2, 3, 4, 5],
    ],
    axis: -2,
  },
  {
    shapes: [
      [6, 7],
      [6, 7],
    ],
    axis: 0,
  },
  {
    shapes: [
      [4, 6, 3],
      [4, 6, 5],
    ],
    axis: 2,
  },
  {
    shapes: [
      [4, 0, 3],
      [4, 0, 3],
    ],
    axis: 2,
  },
];

/** Runs the active backend's `Concat` through the engine. */
function concat(inputs: tf.Tensor[], axis: number): tf.Tensor {
  return tf.engine().runKernel('Concat', inputs as unknown as tf.NamedTensorMap, { axis }) as tf.Tensor;
}

describe('wasm Concat', () => {
  beforeAll(useWasmTrainingBackend);

  CASES.forEach(({ shapes, axis }, i) => {
    it(`joins ${shapes.map((s) => `[${s}]`).join(', ')} along axis ${axis} as the cpu backend does, and frees what it made`, () => {
      const inputs = shapes.map((shape, j) => randomTensor(shape, 10 * i + j));
      const expected = runCpuKernel('Concat', inputs, { axis });
      const dataBefore = tf.backend().numDataIds();
      const joined = concat(inputs, axis);
      expect(tf.backend().numDataIds()).toBe(dataBefore + 1);
      expect(joined.shape).toEqual(expected.shape);
      expect(Array.from(joined.dataSync())).toEqual(Array.from(expected.values));
      tf.dispose([...inputs, joined]);
    });
  });

  it('joins int32 and bool tensors', () => {
    const ints = [
      tf.tensor(
        [
          [1, 2],
          [3, 4],
        ],
        [2, 2],
        'int32',
      ),
      tf.tensor(
        [
          [5, 6],
          [7, 8],
        ],
        [2, 2],
        'int32',
      ),
    ];
    const joined = concat(ints, 1);
    expect(joined.dtype).toBe('int32');
    expect(joined.arraySync()).toEqual([
      [1, 2, 5, 6],
      [3, 4, 7, 8],
    ]);
    const wide = concat([tf.range(0, 80, 1, 'int32').reshape([2, 40]), tf.range(100, 164, 1, 'int32').reshape([2, 32])], 1);
    expect(wide.dtype).toBe('int32');
    expect(Array.from(wide.dataSync())).toEqual([
      ...Array.from({ length: 40 }, (_, i) => i),
      ...Array.from({ length: 32 }, (_, i) => 100 + i),
      ...Array.from({ length: 40 }, (_, i) => 40 + i),
      ...Array.from({ length: 32 }, (_, i) => 132 + i),
    ]);
    const flags = [tf.tensor([[true], [false]], [2, 1], 'bool'), tf.tensor([[false], [true]], [2, 1], 'bool')];
    expect(concat(flags, 1).arraySync()).toEqual([
      [1, 0],
      [0, 1],
    ]);
  });
});
