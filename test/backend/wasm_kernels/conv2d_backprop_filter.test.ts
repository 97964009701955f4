import * as tf from '@tensorflow/tfjs';
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';
import { beforeAll, describe, expect, it } from 'vitest';
import { conv2dBackpropFilterSimd, FEW_TAPS } from '../../../lib/backend/wasm_kernels/conv2d_backprop_filter_simd.js';
import { wasmMemory } from '../../../lib/backend/wasm_kernels/wasm_simd_routine.js';
import {
  CONVOLUTION_CASES,
  type ConvolutionCase,
  convOutShape,
  expectRelativelyClose,
  randomTensor,
  runCpuKernel,
  runKernel,
  useWasmTrainingBackend,
  padFor,
  toNCHW,
} from './kernel_reference.js';

/** Shapes are NHWC; the NCHW runs permute them. One input channel takes the depthwise path where the SIMD routine does not. */
const CASES: ConvolutionCase[] = [
  ...CONVOLUTION_CASES,
  { x: [4, 9, 9, 1], filter: [3, 3, 1, 6], strides: 1, pad: 'same' },
  { x: [2, 9, 8, 1], filter: [3, 2, 1, 4], strides: [2, 3], pad: 'valid' },
  { x: [2, 8, 8, 1], filter: [3, 3, 1, 5], strides: 2, pad: 1, dimRoundingMode: 'ceil' },
  {
    x: [2, 8, 9, 1],
    filter: [3, 3, 1, 4],
    strides: 2,
    pad: [
      [0, 0],
      [2, 0],
      [1, 3],
      [0, 0],
    ],
  },
  // Stride 1 and an input smaller than dy: x is the packed filter.
  { x: [2, 8, 7, 3], filter: [2, 3, 3, 8], strides: 1, pad: 'valid' },
  {
    x: [2, 6, 7, 5],
    filter: [3, 2, 5, 12],
    strides: 1,
    pad: [
      [0, 0],
      [0, 2],
      [1, 0],
      [0, 0],
    ],
  },
  { x: [3, 7, 7, 8], filter: [3, 3, 8, 24], strides: 1, pad: 'same' },
  // Few taps and output channels in sixteens: the SIMD routine's cases in NHWC.
  { x: [2, 9, 9, 1], filter: [3, 3, 1, 16], strides: 1, pad: 'same' },
  {
    x: [2, 8, 9, 3],
    filter: [3, 3, 3, 16],
    strides: 2,
    pad: [
      [0, 0],
      [2, 0],
      [1, 3],
      [0, 0],
    ],
  },
  { x: [2, 8, 8, 2], filter: [3, 3, 2, 32], strides: 2, pad: 1, dimRoundingMode: 'ceil' },
  { x: [1, 7, 6, 1], filter: [5, 5, 1, 16], strides: [2, 1], pad: 'valid' },
  { x: [3, 10, 10, 4], filter: [3, 3, 4, 16], strides: 1, pad: 'same' },
  { x: [16, 28, 28, 1], filter: [3, 3, 1, 16], strides: 1, pad: 'same' },
];

function label(c: ConvolutionCase, dataFormat: string): string {
  return `${dataFormat} x=${c.x} filter=${c.filter} strides=${c.strides} pad=${JSON.stringify(c.pad)} ${c.dimRoundingMode ?? ''}`;
}

beforeAll(useWasmTrainingBackend);

describe('wasm Conv2DBackpropFilter', () => {
  for (const dataFormat of ['NHWC', 'NCHW'] as const) {
    for (const [i, c] of CASES.entries()) {
      it(`equals the cpu kernel: ${label(c, dataFormat)}`, () => {
        const xShape = dataFormat === 'NHWC' ? c.x : toNCHW(c.x);
        const attrs = { strides: c.strides, pad: padFor(c.pad, dataFormat), dataFormat, dimRoundingMode: c.dimRoundingMode, filterShape: c.filter };
        const x = randomTensor(xShape, i);
        const dy = randomTensor(convOutShape(xShape, c.filter, attrs, false), 100 + i);
        const actual = runKernel('Conv2DBackpropFilter', { x, dy }, attrs);
        expectRelativelyClose(actual, runCpuKernel('Conv2DBackpropFilter', { x, dy }, attrs));
        tf.dispose([x, dy, actual]);
      });
    }
  }

  it('takes the SIMD routine for few taps and output channels in sixteens, and XNNPACK otherwise', () => {
    const wasm = tf.engine().backend as BackendWasm;
    const address = (t: tf.Tensor) => wasm.typedArrayFromHeap(t).byteOffset;
    const x = randomTensor([2, 9, 9, 4], 1);
    const dy = randomTensor([2, 9, 9, 16], 2);
    const attrs = { strides: 1, pad: 'same', dataFormat: 'NHWC', filterShape: [3, 3, 4, 16] };
    const dw = tf.zeros([3, 3, 4, 16]);
    const info = (filter: [number, number, number, number]) => tf.backend_util.computeConv2DInfo([2, 9, 9, 4], filter, 1, 1, 'same');
    expect(conv2dBackpropFilterSimd(wasmMemory(wasm), info([3, 3, 4, 16]), address(x), address(dy), address(dw))).toBe(true);
    expectRelativelyClose(dw, runCpuKernel('Conv2DBackpropFilter', { x, dy }, attrs));
    expect(FEW_TAPS).toBeLessThan(5 * 5 * 4);
    expect(conv2dBackpropFilterSimd(wasmMemory(wasm), info([5, 5, 4, 16]), address(x), address(dy), address(dw))).toBe(false);
    expect(conv2dBackpropFilterSimd(wasmMemory(wasm), info([3, 3, 4, 8]), address(x), address(dy), address(dw))).toBe(false);
    tf.dispose([x, dy, dw]);
  });

  it('runs on the wasm backend and leaves no data behind', () => {
    expect(tf.getBackend()).toBe('wasm');
    const attrs = { strides: 2, pad: 'same', dataFormat: 'NHWC', filterShape: [3, 3, 3, 4] };
    const x = randomTensor([2, 7, 7, 3], 1);
    const dy = randomTensor([2, 4, 4, 4], 2);
    const backend = tf.engine().backend;
    tf.dispose(runKernel('Conv2DBackpropFilter', { x, dy }, attrs));
    const before = backend.numDataIds();
    for (let i = 0; i < 5; i++) tf.dispose(runKernel('Conv2DBackpropFilter', { x, dy }, attrs));
    expect(backend.numDataIds()).toBe(before);
    tf.dispose([x, dy]);
  });
});
