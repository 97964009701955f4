/**
 * The wasm `Conv2DBackpropInput` (an override of the backend's own) against
 * the cpu kernel. The cpu kernel has no dilations, so dilated cases are
 * compared with the cpu kernel run undilated on the dilated ("dense")
 * filter, and checked as the adjoint of the forward convolution.
 */
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { conv2DBackpropInputConfig } from '../../../lib/backend/wasm_kernels/conv2d_backprop_input.js';
import {
  CONVOLUTION_CASES,
  type ConvolutionCase,
  convOutShape,
  denseFilter,
  expectRelativelyClose,
  randomTensor,
  runCpuKernel,
  runKernel,
  useWasmTrainingBackend,
  padFor,
  toNCHW,
} from './kernel_reference.js';

interface Case extends ConvolutionCase {
  dilations?: [number, number];
}

/** Shapes are NHWC; the NCHW runs permute them. */
const CASES: Case[] = [
  ...CONVOLUTION_CASES,
  { x: [2, 9, 9, 2], filter: [3, 3, 2, 3], strides: 3, pad: 2, dimRoundingMode: 'round' },
  { x: [2, 9, 9, 3], filter: [3, 3, 3, 2], strides: 1, dilations: [2, 2], pad: 'same' },
  { x: [2, 9, 8, 2], filter: [3, 2, 2, 3], strides: 1, dilations: [2, 3], pad: 'valid' },
  {
    x: [1, 10, 11, 2],
    filter: [3, 3, 2, 4],
    strides: 1,
    dilations: [3, 1],
    pad: [
      [0, 0],
      [1, 2],
      [0, 3],
      [0, 0],
    ],
  },
];

function label(c: Case, dataFormat: string): string {
  return `${dataFormat} x=${c.x} filter=${c.filter} strides=${c.strides} dilations=${c.dilations ?? 1} pad=${JSON.stringify(c.pad)} ${c.dimRoundingMode ?? ''}`;
}

beforeAll(useWasmTrainingBackend);

describe('wasm Conv2DBackpropInput', () => {
  it("is registered in place of the wasm backend's own kernel", () => {
    expect(tf.getKernel('Conv2DBackpropInput', 'wasm')?.kernelFunc).toBe(conv2DBackpropInputConfig.kernelFunc);
  });

  for (const dataFormat of ['NHWC', 'NCHW'] as const) {
    for (const [i, c] of CASES.entries()) {
      it(`equals the cpu kernel: ${label(c, dataFormat)}`, () => {
        const inputShape = dataFormat === 'NHWC' ? c.x : toNCHW(c.x);
        const attrs = { strides: c.strides, dilations: c.dilations, pad: padFor(c.pad, dataFormat), dataFormat, dimRoundingMode: c.dimRoundingMode, inputShape };
        const filter = randomTensor(c.filter, i);
        const dy = randomTensor(convOutShape(inputShape, c.filter, attrs, false), 100 + i);
        const actual = runKernel('Conv2DBackpropInput', { dy, filter }, attrs);
        const dense = c.dilations ? denseFilter(filter, c.dilations) : filter;
        expectRelativelyClose(actual, runCpuKernel('Conv2DBackpropInput', { dy, filter: dense }, { ...attrs, dilations: undefined }));
        tf.dispose([filter, dy, actual, dense]);
      });
    }
  }

  for (const [i, c] of CASES.filter((c) => c.dilations).entries()) {
    it(`is the adjoint of the wasm convolution: ${label(c, 'NHWC')}`, () => {
      const attrs = { strides: c.strides, dilations: c.dilations, pad: c.pad, dataFormat: 'NHWC' };
      const x = randomTensor(c.x, i);
      const filter = randomTensor(c.filter, 10 + i);
      const y = runKernel('Conv2D', { x, filter }, attrs);
      const dy = randomTensor(y.shape, 20 + i);
      const dx = runKernel('Conv2DBackpropInput', { dy, filter }, { ...attrs, inputShape: c.x });
      const dot = (a: tf.Tensor, b: tf.Tensor) => tf.tidy(() => tf.sum(tf.mul(a, b)).dataSync()[0]!);
      expect(dot(dx, x)).toBeCloseTo(dot(y, dy), 3);
      tf.dispose([x, filter, y, dy, dx]);
    });
  }

  it('gives tf.conv2d the gradient the cpu backend gives', async () => {
    const xs = tf.tidy(() => randomTensor([2, 9, 9, 3], 7).dataSync().slice());
    const ws = tf.tidy(() => randomTensor([3, 3, 3, 4], 8).dataSync().slice());
    const grad = () =>
      tf.tidy(() => {
        const x = tf.tensor4d(xs, [2, 9, 9, 3]);
        const w = tf.tensor4d(ws, [3, 3, 3, 4]);
        return tf
          .grad((x) => tf.sum(tf.square(tf.conv2d(x as tf.Tensor4D, w, 2, 'same'))))(x)
          .dataSync()
          .slice();
      });
    const onWasm = grad();
    await tf.setBackend('cpu');
    const onCpu = grad();
    await tf.setBackend('wasm');
    expectRelativelyClose(tf.tensor(onWasm, [2, 9, 9, 3]), { values: onCpu, shape: [2, 9, 9, 3], dtype: 'float32' });
  });

  it('leaves no data behind', () => {
    const backend = tf.engine().backend;
    const filter = randomTensor([3, 3, 3, 4], 1);
    const dy = randomTensor([2, 4, 4, 4], 2);
    const nchw = randomTensor([2, 4, 4, 4], 3);
    const run = () => {
      tf.dispose(runKernel('Conv2DBackpropInput', { dy, filter }, { strides: 2, pad: 'same', dataFormat: 'NHWC', inputShape: [2, 7, 7, 3] }));
      tf.dispose(
        runKernel(
          'Conv2DBackpropInput',
          { dy: nchw, filter },
          {
            strides: 2,
            pad: [
              [0, 0],
              [0, 0],
              [3, 0],
              [0, 2],
            ],
            dataFormat: 'NCHW',
            inputShape: [2, 3, 7, 7],
          },
        ),
      );
    };
    run();
    const before = backend.numDataIds();
    for (let i = 0; i < 5; i++) run();
    expect(backend.numDataIds()).toBe(before);
    tf.dispose([filter, dy, nchw]);
  });
});
