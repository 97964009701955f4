import { availableParallelism } from 'node:os';
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { MultiplyAddActivation } from '../../../lib/backend/multiply_add_attribute.js';
import { MAX_WASM_THREADS } from '../../../lib/backend/wasm_threads.js';
import { withRelaxedSimd } from '../../helpers.js';
import { type ConvolutionPad, expectRelativelyClose, onOneThreadAndWithHelper, randomTensor, runCpuKernel, runKernel, useWasmTrainingBackend } from './kernel_reference.js';

withRelaxedSimd();
beforeAll(useWasmTrainingBackend);

/** A depthwise convolution for FusedDepthwiseConv2D: input, filter `[h, w, channels, multiplier]`, strides, padding, bias, activation. */
interface DepthwiseCase {
  readonly x: [number, number, number, number];
  readonly filter: [number, number, number, number];
  readonly strides: number;
  readonly pad: ConvolutionPad;
  readonly bias: boolean;
  readonly activation: MultiplyAddActivation;
}

/** Cases the routine computes: 3 × 3, one filter per channel, channels in fours. */
const ROUTINE_CASES: DepthwiseCase[] = [
  { x: [1, 5, 5, 4], filter: [3, 3, 4, 1], strides: 1, pad: 'same', bias: false, activation: 'linear' },
  // 20 channels: one vector of sixteen channels, then one of four.
  { x: [2, 7, 9, 20], filter: [3, 3, 20, 1], strides: 2, pad: 'same', bias: true, activation: 'relu6' },
  { x: [1, 8, 6, 32], filter: [3, 3, 32, 1], strides: 2, pad: 'valid', bias: true, activation: 'relu' },
  {
    x: [1, 6, 7, 8],
    filter: [3, 3, 8, 1],
    strides: 1,
    pad: [
      [0, 0],
      [2, 0],
      [0, 2],
      [0, 0],
    ],
    bias: true,
    activation: 'linear',
  },
  // MobileNetV2's second stage: 56 × 56 × 144, stride 1 and 2.
  { x: [1, 56, 56, 144], filter: [3, 3, 144, 1], strides: 1, pad: 'same', bias: true, activation: 'relu6' },
  { x: [1, 56, 56, 144], filter: [3, 3, 144, 1], strides: 2, pad: 'same', bias: true, activation: 'relu6' },
];

/** Cases left to the backend's own kernel. */
const OWN_CASES: DepthwiseCase[] = [
  { x: [1, 6, 6, 8], filter: [5, 5, 8, 1], strides: 1, pad: 'same', bias: true, activation: 'relu' },
  { x: [1, 6, 6, 4], filter: [3, 3, 4, 2], strides: 1, pad: 'same', bias: false, activation: 'relu' },
  { x: [1, 6, 6, 6], filter: [3, 3, 6, 1], strides: 1, pad: 'same', bias: true, activation: 'relu6' },
];

function inputsOf(c: DepthwiseCase, seed: number): Record<string, tf.Tensor> {
  const x = randomTensor(c.x, seed);
  const filter = randomTensor(c.filter, seed + 1);
  return c.bias ? { x, filter, bias: randomTensor([c.filter[2] * c.filter[3]], seed + 2) } : { x, filter };
}

const attrsOf = (c: DepthwiseCase, marked: boolean) => ({
  strides: c.strides,
  pad: c.pad,
  dataFormat: 'NHWC',
  dilations: 1,
  activation: c.activation,
  ...(marked ? { multiplyAdd: 'fused' } : {}),
});

const describeCase = (c: DepthwiseCase) =>
  `${c.x.join('×')} * ${c.filter.join('×')}, strides ${c.strides}, pad ${JSON.stringify(c.pad)}, ${c.bias ? 'bias' : 'no bias'}, ${c.activation}`;

describe('a marked FusedDepthwiseConv2D on wasm', () => {
  it.each(ROUTINE_CASES.map((c, i) => [describeCase(c), c, i] as const))("%s: poptfjs's routine, within float rounding of the cpu backend's", (_, c, i) => {
    const inputs = inputsOf(c, 10 * i);
    const marked = runKernel('FusedDepthwiseConv2D', inputs, attrsOf(c, true));
    const own = runKernel('FusedDepthwiseConv2D', inputs, attrsOf(c, false));
    expectRelativelyClose(marked, runCpuKernel('FusedDepthwiseConv2D', inputs, attrsOf(c, false)), 1e-5);
    // Fused multiply-adds: not XNNPACK's bits.
    expect(Array.from(marked.dataSync())).not.toEqual(Array.from(own.dataSync()));
    tf.dispose([marked, own, ...Object.values(inputs)]);
  });

  it.each(OWN_CASES.map((c, i) => [describeCase(c), c, i] as const))("%s: the backend's own kernel, bit for bit", (_, c, i) => {
    const inputs = inputsOf(c, 100 + 10 * i);
    const marked = runKernel('FusedDepthwiseConv2D', inputs, attrsOf(c, true));
    const own = runKernel('FusedDepthwiseConv2D', inputs, attrsOf(c, false));
    expect(Array.from(marked.dataSync())).toEqual(Array.from(own.dataSync()));
    tf.dispose([marked, own, ...Object.values(inputs)]);
  });

  it.skipIf(Math.min(availableParallelism(), MAX_WASM_THREADS) < 2 || process.env.POPTFJS_WASM_THREADS !== undefined)(
    'gives the same numbers bit for bit on one thread and with the helper thread',
    () => {
      const c = ROUTINE_CASES[4]!;
      const inputs = inputsOf(c, 3);
      const [one, withHelper] = onOneThreadAndWithHelper(() => Array.from(runKernel('FusedDepthwiseConv2D', inputs, attrsOf(c, true)).dataSync()));
      expect(withHelper).toEqual(one);
      tf.dispose(Object.values(inputs));
    },
  );
});
