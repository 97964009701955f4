/**
 * The wasm `MaxPoolGrad` and `AvgPoolGrad` (overrides of the backend's own)
 * against the cpu kernels, over filters, strides (windows overlapping,
 * touching and apart), paddings and, for max pooling, ties: the element
 * that gets a window's gradient is the first of its largest in row-major
 * window order, and an element winning several windows gets their sum as
 * the cpu kernel computes it (the same float).
 */
import * as tf from '@tensorflow/tfjs';
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';
import { beforeAll, describe, expect, it } from 'vitest';
import { avgPoolGradConfig } from '../../../lib/backend/wasm_kernels/avg_pool_grad.js';
import { maxPoolGradConfig } from '../../../lib/backend/wasm_kernels/max_pool_grad.js';
import { maxPoolGradSimd } from '../../../lib/backend/wasm_kernels/max_pool_grad_simd.js';
import { wasmMemory } from '../../../lib/backend/wasm_kernels/wasm_simd_routine.js';
import { expectRelativelyClose, randomTensor, runCpuKernel, runKernel, useWasmTrainingBackend } from './kernel_reference.js';

interface Case {
  x: [number, number, number, number];
  filterSize: number | [number, number];
  strides: number | [number, number];
  pad: 'same' | 'valid' | number | tf.backend_util.ExplicitPadding;
  dimRoundingMode?: 'floor' | 'round' | 'ceil';
}

const CASES: Case[] = [
  { x: [2, 8, 8, 3], filterSize: 2, strides: 2, pad: 'valid' },
  { x: [2, 9, 7, 3], filterSize: 2, strides: 2, pad: 'valid' },
  { x: [2, 9, 7, 3], filterSize: 2, strides: 2, pad: 'same' },
  { x: [2, 9, 9, 2], filterSize: 3, strides: 3, pad: 'valid' },
  { x: [1, 10, 11, 4], filterSize: [2, 3], strides: [2, 3], pad: 'same' },
  { x: [2, 9, 9, 2], filterSize: 3, strides: 2, pad: 'valid' },
  { x: [2, 9, 8, 2], filterSize: 3, strides: 2, pad: 'same' },
  { x: [1, 7, 7, 3], filterSize: 3, strides: 1, pad: 'same' },
  { x: [2, 6, 6, 2], filterSize: 2, strides: 1, pad: 'valid' },
  { x: [1, 11, 10, 2], filterSize: [3, 2], strides: [2, 1], pad: 'same' },
  { x: [2, 10, 10, 2], filterSize: 2, strides: 3, pad: 'valid' },
  { x: [1, 11, 9, 2], filterSize: [2, 1], strides: [4, 3], pad: 'same' },
  { x: [2, 8, 8, 2], filterSize: 3, strides: 2, pad: 1, dimRoundingMode: 'ceil' },
  { x: [2, 8, 8, 2], filterSize: 3, strides: 2, pad: 1, dimRoundingMode: 'floor' },
  { x: [1, 9, 9, 2], filterSize: 3, strides: 3, pad: 2, dimRoundingMode: 'round' },
  {
    x: [2, 7, 8, 3],
    filterSize: 3,
    strides: 2,
    pad: [
      [0, 0],
      [2, 0],
      [1, 2],
      [0, 0],
    ],
  },
  { x: [1, 5, 5, 1], filterSize: 1, strides: 1, pad: 'valid' },
  { x: [1, 6, 6, 2], filterSize: 6, strides: 1, pad: 'valid' },
  // Channels in fours and windows apart or touching: the SIMD routine's cases.
  { x: [2, 8, 8, 4], filterSize: 2, strides: 2, pad: 'valid' },
  { x: [2, 9, 7, 8], filterSize: 2, strides: 2, pad: 'same' },
  { x: [2, 10, 10, 4], filterSize: 2, strides: 3, pad: 'valid' },
  { x: [2, 8, 8, 4], filterSize: 2, strides: 3, pad: 1, dimRoundingMode: 'ceil' },
  { x: [1, 11, 9, 12], filterSize: [2, 1], strides: [4, 3], pad: 'same' },
  {
    x: [2, 7, 8, 4],
    filterSize: 3,
    strides: 3,
    pad: [
      [0, 0],
      [2, 0],
      [1, 2],
      [0, 0],
    ],
  },
];

function label(c: Case): string {
  return `x=${c.x} filter=${c.filterSize} strides=${c.strides} pad=${JSON.stringify(c.pad)} ${c.dimRoundingMode ?? ''}`;
}

function attrsOf(c: Case) {
  return { filterSize: c.filterSize, strides: c.strides, pad: c.pad, dimRoundingMode: c.dimRoundingMode };
}

/** Values with many ties: small integers, positive and negative. */
function tiedTensor(shape: number[], seed: number): tf.Tensor {
  return tf.tidy(() => tf.sub(tf.floor(tf.randomUniform(shape, 0, 3, 'float32', seed)), 1));
}

/** Rectified values: most windows hold several zeros, some only zeros. */
function rectifiedTensor(shape: number[], seed: number): tf.Tensor {
  return tf.tidy(() => tf.relu(tf.sub(randomTensor(shape, seed), 1)));
}

beforeAll(useWasmTrainingBackend);

describe('wasm MaxPoolGrad', () => {
  it("is registered in place of the wasm backend's own kernel", () => {
    expect(tf.getKernel('MaxPoolGrad', 'wasm')?.kernelFunc).toBe(maxPoolGradConfig.kernelFunc);
  });

  const inputs = { 'random values': randomTensor, ties: tiedTensor, 'rectified values': rectifiedTensor };
  for (const [kind, make] of Object.entries(inputs)) {
    for (const [i, c] of CASES.entries()) {
      it(`equals the cpu kernel on ${kind}: ${label(c)}`, () => {
        const attrs = attrsOf(c);
        const input = make(c.x, i);
        const output = runKernel('MaxPool', { x: input }, attrs);
        const dy = randomTensor(output.shape, 100 + i);
        const actual = runKernel('MaxPoolGrad', { dy, input, output }, attrs);
        expect(Array.from(actual.dataSync())).toEqual(Array.from(runCpuKernel('MaxPoolGrad', { dy, input, output }, attrs).values));
        tf.dispose([input, output, dy, actual]);
      });
    }
  }

  it('skips NaN elements and gives a window of only NaN and -Infinity no gradient, as the cpu kernel does', () => {
    const attrs = { filterSize: 2, strides: 1, pad: 'same' };
    const input = tf.tensor4d([NaN, 2, -Infinity, NaN, 1, NaN, -Infinity, 3, NaN, -Infinity, NaN, -Infinity, 0, -0, 5, Infinity], [1, 4, 4, 1]);
    const dy = randomTensor([1, 4, 4, 1], 3);
    const actual = runKernel('MaxPoolGrad', { dy, input, output: input }, attrs);
    expect(Array.from(actual.dataSync())).toEqual(Array.from(runCpuKernel('MaxPoolGrad', { dy, input, output: input }, attrs).values));
    tf.dispose([input, dy, actual]);
  });

  it('computes windows apart with channels in fours by its SIMD routine, and leaves the rest to its loop', () => {
    const wasm = tf.engine().backend as BackendWasm;
    const memory = wasmMemory(wasm);
    const input = tiedTensor([2, 6, 6, 8], 1);
    // Zeros of both signs in dy: the cpu kernel's sums turn -0 into 0.
    const dy = tf.mul(randomTensor([2, 3, 3, 8], 2), tiedTensor([2, 3, 3, 8], 3));
    const attrs = { filterSize: 2, strides: 2, pad: 'valid' };
    const info = tf.backend_util.computePool2DInfo([2, 6, 6, 8], 2, 2, 1, 'valid');
    const dx = tf.zeros([2, 6, 6, 8]);
    const address = (t: tf.Tensor) => wasm.typedArrayFromHeap(t).byteOffset;
    expect(maxPoolGradSimd(memory, info, address(input), address(dy), address(dx))).toBe(true);
    expect(Array.from(dx.dataSync())).toEqual(Array.from(runCpuKernel('MaxPoolGrad', { dy, input, output: input }, attrs).values));
    const overlapping = tf.backend_util.computePool2DInfo([2, 6, 6, 8], 3, 2, 1, 'valid');
    const threeChannels = tf.backend_util.computePool2DInfo([2, 6, 6, 3], 2, 2, 1, 'valid');
    expect(maxPoolGradSimd(memory, overlapping, address(input), address(dy), address(dx))).toBe(false);
    expect(maxPoolGradSimd(memory, threeChannels, address(input), address(dy), address(dx))).toBe(false);
    tf.dispose([input, dy, dx]);
  });

  it("gives a window of equal elements' gradient to its first element", () => {
    const input = tf.tensor4d([
      [
        [[5], [5]],
        [[5], [5]],
      ],
    ]);
    const dy = tf.tensor4d([[[[7]]]]);
    const output = runKernel('MaxPool', { x: input }, { filterSize: 2, strides: 2, pad: 'valid' });
    const dx = runKernel('MaxPoolGrad', { dy, input, output }, { filterSize: 2, strides: 2, pad: 'valid' });
    expect(Array.from(dx.dataSync())).toEqual([7, 0, 0, 0]);
    tf.dispose([input, dy, output, dx]);
  });
});

describe('wasm AvgPoolGrad', () => {
  it("is registered in place of the wasm backend's own kernel", () => {
    expect(tf.getKernel('AvgPoolGrad', 'wasm')?.kernelFunc).toBe(avgPoolGradConfig.kernelFunc);
  });

  for (const [i, c] of CASES.entries()) {
    it(`equals the cpu kernel: ${label(c)}`, () => {
      const { filterSize, strides, pad } = c;
      const attrs = { filterSize, strides, pad };
      const input = randomTensor(c.x, i);
      const dy = randomTensor(tf.backend_util.computePool2DInfo(c.x, filterSize, strides, 1, pad).outShape, 100 + i);
      const actual = runKernel('AvgPoolGrad', { dy, input }, attrs);
      expectRelativelyClose(actual, runCpuKernel('AvgPoolGrad', { dy, input }, attrs));
      tf.dispose([input, dy, actual]);
    });
  }
});

describe('wasm pooling gradients', () => {
  it('give tf.maxPool and tf.avgPool the gradients the cpu backend gives', async () => {
    const xs = tf.tidy(() => tiedTensor([2, 9, 9, 3], 5).dataSync().slice());
    const grads = () =>
      tf.tidy(() => {
        const x = tf.tensor4d(xs, [2, 9, 9, 3]);
        const loss = (x: tf.Tensor) => tf.add(tf.sum(tf.square(tf.maxPool(x as tf.Tensor4D, 3, 2, 'same'))), tf.sum(tf.square(tf.avgPool(x as tf.Tensor4D, 2, 2, 'valid'))));
        return tf.grad(loss)(x).dataSync().slice();
      });
    const onWasm = grads();
    await tf.setBackend('cpu');
    const onCpu = grads();
    await tf.setBackend('wasm');
    expectRelativelyClose(tf.tensor(onWasm, [2, 9, 9, 3]), { values: onCpu, shape: [2, 9, 9, 3], dtype: 'float32' });
  });

  it('leave no data behind', () => {
    const backend = tf.engine().backend;
    const input = randomTensor([2, 9, 9, 3], 1);
    const run = () => {
      for (const attrs of [
        { filterSize: 3, strides: 2, pad: 'same' },
        { filterSize: 2, strides: 2, pad: 'valid' },
        { filterSize: 2, strides: 3, pad: 1, dimRoundingMode: 'ceil' },
      ]) {
        const output = runKernel('MaxPool', { x: input }, attrs);
        const dy = randomTensor(output.shape, 2);
        tf.dispose([runKernel('MaxPoolGrad', { dy, input, output }, attrs), runKernel('AvgPoolGrad', { dy, input }, attrs), output, dy]);
      }
    };
    run();
    const before = backend.numDataIds();
    for (let i = 0; i < 3; i++) run();
    expect(backend.numDataIds()).toBe(before);
    input.dispose();
  });
});
