import * as tf from '@tensorflow/tfjs';
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';
import { beforeAll, describe, expect, it } from 'vitest';
import { IM2COL_MAX_BYTES, PART_BYTES, transposedIm2colFits } from '../../../lib/backend/wasm_kernels/conv2d_backprop_filter.js';
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
  // Stride 1, output channels in fours: the transposed im2col and one product, in NHWC. Outputs as wide as the input copy whole images.
  { x: [3, 9, 11, 5], filter: [3, 3, 5, 12], strides: 1, pad: 'same' },
  { x: [4, 14, 14, 16], filter: [3, 3, 16, 32], strides: 1, pad: 'same' },
  { x: [2, 3, 2, 3], filter: [5, 5, 3, 4], strides: 1, pad: 'same' },
  {
    x: [2, 6, 9, 7],
    filter: [3, 5, 7, 4],
    strides: 1,
    pad: [
      [0, 0],
      [3, 1],
      [2, 2],
      [0, 0],
    ],
  },
  // Outputs narrower or wider than the input: row by row.
  { x: [2, 10, 7, 3], filter: [4, 2, 3, 8], strides: 1, pad: 'valid' },
  {
    x: [1, 4, 5, 2],
    filter: [3, 3, 2, 4],
    strides: 1,
    pad: [
      [0, 0],
      [4, 1],
      [0, 5],
      [0, 0],
    ],
  },
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

  it('takes the transposed im2col for stride-1 NHWC gradients with output channels in fours and the im2col within its cap', () => {
    const info = (
      x: [number, number, number, number],
      filter: [number, number, number, number],
      strides = 1,
      dilations = 1,
      dataFormat: 'channelsLast' | 'channelsFirst' = 'channelsLast',
    ) => tf.backend_util.computeConv2DInfo(x, filter, strides, dilations, 'same', undefined, false, dataFormat);
    expect(transposedIm2colFits(info([64, 14, 14, 16], [3, 3, 16, 32]))).toBe(true);
    expect(transposedIm2colFits(info([64, 14, 14, 16], [3, 3, 16, 30]))).toBe(false);
    expect(transposedIm2colFits(info([64, 14, 14, 16], [3, 3, 16, 32], 2))).toBe(false);
    expect(transposedIm2colFits(info([64, 14, 14, 16], [3, 3, 16, 32], 1, 2))).toBe(false);
    expect(transposedIm2colFits(info([64, 16, 14, 14], [3, 3, 16, 32], 1, 1, 'channelsFirst'))).toBe(false);
    // 261 taps × 65536 positions × 4 bytes is just over the cap, 28 input channels (252 taps) just under it.
    expect(4 * 261 * 65536).toBeGreaterThan(IM2COL_MAX_BYTES);
    expect(transposedIm2colFits(info([1, 256, 256, 29], [3, 3, 29, 4]))).toBe(false);
    expect(transposedIm2colFits(info([1, 256, 256, 28], [3, 3, 28, 4]))).toBe(true);
  });

  // biome-ignore lint/complexity/noExcessiveCognitiveComplexity: the reference sums are an inline loop nest, written as the kernel's order of additions is documented, to be compared bit for bit
  it("sums the transposed im2col's product a few images at a time in the order of one product: a float32 loop's sums, bit for bit", () => {
    // 144 taps and 32 output channels over 14 × 14 positions: 138 KB an image, so 40 images take two parts.
    const [batch, size, inChannels, outChannels] = [40, 14, 16, 32];
    const imageBytes = 4 * size * size * (9 * inChannels + outChannels);
    expect(Math.floor(PART_BYTES / imageBytes)).toBeLessThan(batch);
    const x = randomTensor([batch, size, size, inChannels], 11);
    const dy = randomTensor([batch, size, size, outChannels], 12);
    const attrs = { strides: 1, pad: 'same', dataFormat: 'NHWC', filterShape: [3, 3, inChannels, outChannels] };
    expect(transposedIm2colFits(tf.backend_util.computeConv2DInfo(x.shape as [number, number, number, number], [3, 3, inChannels, outChannels], 1, 1, 'same'))).toBe(true);
    const actual = runKernel('Conv2DBackpropFilter', { x, dy }, attrs).dataSync();
    const xs = x.dataSync();
    const dys = dy.dataSync();
    const expected = new Float32Array(actual.length);
    const sums = new Float32Array(outChannels);
    for (let i = 0; i < 3; i++) {
      for (let j = 0; j < 3; j++) {
        for (let ci = 0; ci < inChannels; ci++) {
          sums.fill(0);
          // Every output position in order (image, row, column); a tap in the padding adds 0 · dy.
          for (let b = 0; b < batch; b++) {
            for (let oy = 0; oy < size; oy++) {
              for (let ox = 0; ox < size; ox++) {
                const [y, xx] = [oy + i - 1, ox + j - 1];
                const input = y >= 0 && y < size && xx >= 0 && xx < size ? xs[((b * size + y) * size + xx) * inChannels + ci]! : 0;
                const at = ((b * size + oy) * size + ox) * outChannels;
                for (let co = 0; co < outChannels; co++) sums[co] = Math.fround(sums[co]! + Math.fround(input * dys[at + co]!));
              }
            }
          }
          expected.set(sums, ((i * 3 + j) * inChannels + ci) * outChannels);
        }
      }
    }
    expect(Array.from(actual)).toEqual(Array.from(expected));
    tf.dispose([x, dy]);
  });

  it('equals the cpu kernel above the im2col cap, on the other path', () => {
    const attrs = { strides: 1, pad: 'same', dataFormat: 'NHWC', filterShape: [3, 3, 29, 4] };
    const x = randomTensor([1, 256, 256, 29], 7);
    const dy = randomTensor([1, 256, 256, 4], 8);
    const actual = runKernel('Conv2DBackpropFilter', { x, dy }, attrs);
    expectRelativelyClose(actual, runCpuKernel('Conv2DBackpropFilter', { x, dy }, attrs));
    tf.dispose([x, dy, actual]);
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
    const im2colAttrs = { strides: 1, pad: 'same', dataFormat: 'NHWC', filterShape: [3, 3, 3, 8] };
    const im2colDy = randomTensor([2, 7, 7, 8], 3);
    tf.dispose(runKernel('Conv2DBackpropFilter', { x, dy: im2colDy }, im2colAttrs));
    const beforeIm2col = backend.numDataIds();
    for (let i = 0; i < 5; i++) tf.dispose(runKernel('Conv2DBackpropFilter', { x, dy: im2colDy }, im2colAttrs));
    expect(backend.numDataIds()).toBe(beforeIm2col);
    tf.dispose([x, dy, im2colDy]);
  });
});
