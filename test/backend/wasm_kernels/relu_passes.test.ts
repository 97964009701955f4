/**
 * `poptfjs.AddRelu` and `poptfjs.ReluGrad` on the wasm backend (one SIMD
 * pass each) and on the cpu backend (the backend's own kernels), bit for bit
 * against what plain tfjs computes on the same backend: `tf.add` then
 * `tf.relu`, and `tf.mul(dy, tf.step(x))`, the gradient tfjs gives a relu.
 */
import * as tf from '@tensorflow/tfjs';
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POPTFJS_KERNELS } from '../../../lib/backend/kernel_catalogue/kernel_catalogue.js';
import { addReluSimd, reluGradSimd } from '../../../lib/backend/wasm_kernels/relu_passes_simd.js';
import { wasmMemory } from '../../../lib/backend/wasm_kernels/wasm_simd_routine.js';
import { useWasmTrainingBackend } from './kernel_reference.js';

/** Bit patterns the kernels must keep as tfjs does: NaNs of both signs (quiet and signalling), ±0, ±∞, ± the smallest denormal. */
const SPECIAL_BITS = [0xffc00000, 0x7fc00000, 0x7f800001, 0xff800001, 0x80000000, 0, 0x7f800000, 0xff800000, 1, 0x80000001];

/** `n` seeded values in [-2, 2) with a special bit pattern at every fifth element, from `seed`. */
function values(n: number, seed: number): Float32Array {
  const out = new Float32Array(n);
  const bits = new Uint32Array(out.buffer);
  let state = seed;
  for (let i = 0; i < n; i++) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    out[i] = ((state >>> 8) / 2 ** 24 - 0.5) * 4;
    if (i % 5 === seed % 5) bits[i] = SPECIAL_BITS[(i + seed) % SPECIAL_BITS.length]!;
  }
  return out;
}

const tensor = (shape: number[], seed: number) =>
  tf.tensor(
    values(
      shape.reduce((a, b) => a * b, 1),
      seed,
    ),
    shape,
  );
const bitsOf = (t: tf.Tensor) => Array.from(new Uint32Array((t.dataSync() as Float32Array).slice().buffer));

/** [a's shape, b's shape]: rows whose length is a multiple of 4 or not, a bias of one element, b of a's shape. */
const ADD_CASES: ReadonlyArray<[number[], number[]]> = [
  [[2, 5, 5, 16], [16]],
  [[3, 5, 7], [7]],
  [
    [10, 13],
    [1, 13],
  ],
  [
    [4, 3, 6],
    [3, 6],
  ],
  [[6, 6], [1]],
  [
    [5, 3],
    [5, 3],
  ],
  [[9], [9]],
  [[0, 4], [4]],
];

const GRADIENT_SHAPES: readonly number[][] = [[2, 5, 5, 16], [3, 5, 7], [4], [3], [1, 1]];

function backendTests(backend: 'wasm' | 'cpu'): void {
  it.each(ADD_CASES)(`poptfjs.AddRelu of [%s] and [%s] gives tf.add and tf.relu of it bit for bit (${backend})`, (aShape, bShape) => {
    expect(tf.getBackend()).toBe(backend);
    const a = tensor(aShape, 1);
    const b = tensor(bShape, 2);
    const [sum, relu] = tf.engine().runKernel(POPTFJS_KERNELS.addRelu, { a, b }, {}) as tf.Tensor[];
    const expectedSum = tf.add(a, b);
    const expectedRelu = tf.relu(expectedSum);
    expect(sum!.shape).toEqual(aShape);
    expect(relu!.shape).toEqual(aShape);
    expect(bitsOf(sum!)).toEqual(bitsOf(expectedSum));
    expect(bitsOf(relu!)).toEqual(bitsOf(expectedRelu));
    tf.dispose([a, b, sum!, relu!, expectedSum, expectedRelu]);
  });

  it.each(GRADIENT_SHAPES.map((s) => [s]))(`poptfjs.ReluGrad of [%s] gives tf.mul(dy, tf.step(x)) bit for bit (${backend})`, (shape) => {
    const dy = tensor(shape, 3);
    const x = tensor(shape, 4);
    const gradient = tf.engine().runKernel(POPTFJS_KERNELS.reluGrad, { dy, x }, {}) as tf.Tensor;
    const expected = tf.mul(dy, tf.step(x));
    expect(bitsOf(gradient)).toEqual(bitsOf(expected));
    tf.dispose([dy, x, gradient, expected]);
  });

  it(`keeps the sign of a zero gradient and passes NaN through, as tfjs does (${backend})`, () => {
    const dy = tf.tensor1d([-2, -2, 3, Number.NaN, 5, -0]);
    const x = tf.tensor1d([-1, Number.NaN, 0, 1, -0, 2]);
    const gradient = tf.engine().runKernel(POPTFJS_KERNELS.reluGrad, { dy, x }, {}) as tf.Tensor;
    const out = Array.from(gradient.dataSync());
    expect(Object.is(out[0], -0)).toBe(true);
    expect(out[1]).toBeNaN();
    expect(out[2]).toBe(0);
    expect(out[3]).toBeNaN();
    expect(out[4]).toBe(0);
    expect(Object.is(out[5], -0)).toBe(true);
    tf.dispose([dy, x, gradient]);
  });

  it(`refuses a b that is not broadcast along a's last axes, and int32 inputs (${backend})`, () => {
    const a = tf.zeros([4, 3]);
    expect(() => tf.engine().runKernel(POPTFJS_KERNELS.addRelu, { a, b: tf.zeros([4, 1]) }, {})).toThrow(
      "poptfjs.AddRelu takes float32 a and b with b of a's shape or broadcast along its last axes; got float32[4,3] and float32[4,1]",
    );
    expect(() => tf.engine().runKernel(POPTFJS_KERNELS.reluGrad, { dy: a, x: tf.zeros([4, 3], 'int32') }, {})).toThrow(
      'poptfjs.ReluGrad takes float32 dy and x of one shape; got float32[4,3] and int32[4,3]',
    );
  });
}

describe('poptfjs.AddRelu and poptfjs.ReluGrad on wasm', () => {
  beforeAll(useWasmTrainingBackend);

  backendTests('wasm');

  it('runs both as WebAssembly SIMD routines on the backend memory', () => {
    const wasm = tf.backend() as BackendWasm;
    const a = tensor([3, 5], 5);
    const out = wasm.makeOutput([3, 5], 'float32');
    const at = (t: tf.TensorInfo) => wasm.typedArrayFromHeap(t).byteOffset;
    expect(addReluSimd(wasmMemory(wasm), at(a), at(a), at(out), at(out), 3, 5)).toBe(true);
    expect(reluGradSimd(wasmMemory(wasm), at(a), at(a), at(out), 15)).toBe(true);
    wasm.disposeData(out.dataId);
    a.dispose();
  });
});

describe('poptfjs.AddRelu and poptfjs.ReluGrad on cpu', () => {
  let previous = '';
  beforeAll(async () => {
    await useWasmTrainingBackend();
    previous = tf.getBackend();
    await tf.setBackend('cpu');
  });
  afterAll(async () => {
    await tf.setBackend(previous);
  });

  backendTests('cpu');
});
