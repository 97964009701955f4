/**
 * The wasm depthwise backprop kernels against the cpu kernels.
 *
 * The cpu kernels ignore `dilations` in their loops (only the shapes use it),
 * so dilated cases are compared with the cpu kernel run undilated on the
 * dilated ("dense") filter: a filter with `dilation - 1` zero taps between
 * its taps computes the same convolution. Dilated cases are also checked as
 * the adjoints of the forward convolution: <dy, conv(x, w)> = <dx, x> = <dw, w>.
 */
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { convOutShape, denseFilter, expectRelativelyClose, randomTensor, runCpuKernel, runKernel, useWasmTrainingBackend, type KernelResult } from './kernel_reference.js';

interface Case {
  x: [number, number, number, number];
  filter: [number, number, number, number];
  strides: number | [number, number];
  dilations: [number, number];
  pad: 'same' | 'valid' | number | tf.backend_util.ExplicitPadding;
  dimRoundingMode?: 'floor' | 'round' | 'ceil';
}

const CASES: Case[] = [
  { x: [2, 7, 7, 3], filter: [3, 3, 3, 1], strides: 1, dilations: [1, 1], pad: 'same' },
  { x: [2, 7, 7, 3], filter: [3, 3, 3, 2], strides: 2, dilations: [1, 1], pad: 'same' },
  { x: [2, 8, 8, 3], filter: [3, 3, 3, 1], strides: 2, dilations: [1, 1], pad: 'valid' },
  { x: [1, 9, 8, 2], filter: [2, 3, 2, 3], strides: [2, 3], dilations: [1, 1], pad: 'same' },
  { x: [3, 6, 6, 1], filter: [5, 5, 1, 4], strides: 1, dilations: [1, 1], pad: 'valid' },
  { x: [2, 5, 6, 4], filter: [1, 1, 4, 1], strides: 2, dilations: [1, 1], pad: 'valid' },
  { x: [2, 8, 8, 2], filter: [3, 3, 2, 1], strides: 2, dilations: [1, 1], pad: 1, dimRoundingMode: 'ceil' },
  { x: [2, 8, 8, 2], filter: [3, 3, 2, 2], strides: 2, dilations: [1, 1], pad: 1, dimRoundingMode: 'floor' },
  {
    x: [2, 8, 9, 3],
    filter: [3, 3, 3, 2],
    strides: 2,
    dilations: [1, 1],
    pad: [
      [0, 0],
      [2, 0],
      [1, 3],
      [0, 0],
    ],
  },
  {
    x: [1, 4, 4, 2],
    filter: [3, 3, 2, 1],
    strides: 1,
    dilations: [1, 1],
    pad: [
      [0, 0],
      [4, 1],
      [0, 5],
      [0, 0],
    ],
  },
  { x: [2, 9, 9, 3], filter: [3, 3, 3, 1], strides: 1, dilations: [2, 2], pad: 'same' },
  { x: [2, 9, 8, 2], filter: [3, 2, 2, 2], strides: 1, dilations: [2, 3], pad: 'valid' },
  { x: [1, 10, 10, 2], filter: [3, 3, 2, 1], strides: 2, dilations: [2, 2], pad: 'same' },
];

/** The taps of a dense filter gradient that are taps of the dilated filter. */
function dilatedTaps(dense: KernelResult, filterShape: number[], [dh, dw]: [number, number]): KernelResult {
  const [fh, fw, c, m] = filterShape as [number, number, number, number];
  const denseWidth = dense.shape[1]!;
  const values = new Float32Array(fh * fw * c * m);
  for (let i = 0; i < fh; i++) {
    for (let j = 0; j < fw; j++) {
      const from = (i * dh * denseWidth + j * dw) * c * m;
      values.set(dense.values.subarray(from, from + c * m), (i * fw + j) * c * m);
    }
  }
  return { values, shape: filterShape, dtype: 'float32' };
}

function label(c: Case): string {
  return `x=${c.x} filter=${c.filter} strides=${c.strides} dilations=${c.dilations} pad=${JSON.stringify(c.pad)} ${c.dimRoundingMode ?? ''}`;
}

const dilated = (c: Case) => c.dilations[0] > 1 || c.dilations[1] > 1;

beforeAll(useWasmTrainingBackend);

describe('wasm DepthwiseConv2dNativeBackpropFilter', () => {
  for (const [i, c] of CASES.entries()) {
    it(`equals the cpu kernel: ${label(c)}`, () => {
      const attrs = { strides: c.strides, dilations: c.dilations, pad: c.pad, dimRoundingMode: c.dimRoundingMode, filterShape: c.filter };
      const x = randomTensor(c.x, i);
      const dy = randomTensor(convOutShape(c.x, c.filter, attrs, true), 100 + i);
      const actual = runKernel('DepthwiseConv2dNativeBackpropFilter', { x, dy }, attrs);
      const expected = dilated(c)
        ? dilatedTaps(
            runCpuKernel('DepthwiseConv2dNativeBackpropFilter', { x, dy }, { ...attrs, dilations: 1, filterShape: denseFilter(tf.zeros(c.filter), c.dilations).shape }),
            c.filter,
            c.dilations,
          )
        : runCpuKernel('DepthwiseConv2dNativeBackpropFilter', { x, dy }, attrs);
      expectRelativelyClose(actual, expected);
      tf.dispose([x, dy, actual]);
    });
  }
});

describe('wasm DepthwiseConv2dNativeBackpropInput', () => {
  for (const [i, c] of CASES.entries()) {
    it(`equals the cpu kernel: ${label(c)}`, () => {
      const attrs = { strides: c.strides, dilations: c.dilations, pad: c.pad, dimRoundingMode: c.dimRoundingMode, inputShape: c.x };
      const filter = randomTensor(c.filter, i);
      const dy = randomTensor(convOutShape(c.x, c.filter, attrs, true), 100 + i);
      const actual = runKernel('DepthwiseConv2dNativeBackpropInput', { dy, filter }, attrs);
      const expected = dilated(c)
        ? runCpuKernel('DepthwiseConv2dNativeBackpropInput', { dy, filter: denseFilter(filter, c.dilations) }, { ...attrs, dilations: 1 })
        : runCpuKernel('DepthwiseConv2dNativeBackpropInput', { dy, filter }, attrs);
      expectRelativelyClose(actual, expected);
      tf.dispose([filter, dy, actual]);
    });
  }
});

describe('wasm depthwise backprop kernels', () => {
  for (const [i, c] of CASES.filter(dilated).entries()) {
    it(`are the adjoints of the wasm depthwise convolution: ${label(c)}`, () => {
      const attrs = { strides: c.strides, dilations: c.dilations, pad: c.pad };
      const x = randomTensor(c.x, i);
      const filter = randomTensor(c.filter, 10 + i);
      const y = runKernel('DepthwiseConv2dNative', { x, filter }, attrs);
      const dy = randomTensor(y.shape, 20 + i);
      const dx = runKernel('DepthwiseConv2dNativeBackpropInput', { dy, filter }, { ...attrs, inputShape: c.x });
      const dw = runKernel('DepthwiseConv2dNativeBackpropFilter', { x, dy }, { ...attrs, filterShape: c.filter });
      const dot = (a: tf.Tensor, b: tf.Tensor) => tf.tidy(() => tf.sum(tf.mul(a, b)).dataSync()[0]!);
      const yDotDy = dot(y, dy);
      expect(dot(dx, x)).toBeCloseTo(yDotDy, 3);
      expect(dot(dw, filter)).toBeCloseTo(yDotDy, 3);
      tf.dispose([x, filter, y, dy, dx, dw]);
    });
  }

  it('leave no data behind', () => {
    const backend = tf.engine().backend;
    const x = randomTensor([2, 7, 7, 3], 1);
    const filter = randomTensor([3, 3, 3, 2], 2);
    const dy = randomTensor([2, 4, 4, 6], 3);
    const common = { strides: 2, dilations: 1, pad: 'same' };
    const run = () => {
      tf.dispose(runKernel('DepthwiseConv2dNativeBackpropFilter', { x, dy }, { ...common, filterShape: filter.shape }));
      tf.dispose(runKernel('DepthwiseConv2dNativeBackpropInput', { dy, filter }, { ...common, inputShape: x.shape }));
    };
    run();
    const before = backend.numDataIds();
    for (let i = 0; i < 5; i++) run();
    expect(backend.numDataIds()).toBe(before);
    tf.dispose([x, filter, dy]);
  });
});
