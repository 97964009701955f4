import { availableParallelism } from 'node:os';
import * as tf from '@tensorflow/tfjs';
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';
import { beforeAll, describe, expect, it } from 'vitest';
import type { MultiplyAddActivation } from '../../../lib/backend/multiply_add_attribute.js';
import { MIN_WINOGRAD_OUTPUTS } from '../../../lib/backend/wasm_kernels/fused_conv2d.js';
import { filterCopyBytes, PANEL_COLUMNS } from '../../../lib/backend/wasm_kernels/packed_filter.js';
import { winogradConvolution, winogradFilter } from '../../../lib/backend/wasm_kernels/winograd_convolution.js';
import { MAX_WASM_THREADS } from '../../../lib/backend/wasm_threads.js';
import { withRelaxedSimd } from '../../helpers.js';
import { type ConvolutionPad, expectRelativelyClose, onOneThreadAndWithHelper, randomTensor, runCpuKernel, runKernel, useWasmTrainingBackend } from './kernel_reference.js';

withRelaxedSimd();
beforeAll(useWasmTrainingBackend);

describe("F(2 × 2, 3 × 3)'s filter transform", () => {
  it('is G g Gᵀ, each of the 16 components packed in panels of 8 output channels', () => {
    // g = [[1, 2, 3], [4, 5, 6], [7, 8, 9]]: G g = [[1, 2, 3], [6, 7.5, 9], [2, 2.5, 3], [7, 8, 9]], and each row
    // [a, b, d] of it times Gᵀ is [a, (a + b + d) / 2, (a - b + d) / 2, d].
    const expected = [1, 3, 1, 3, 6, 11.25, 3.75, 9, 2, 3.75, 1.25, 3, 7, 12, 4, 9];
    const packed = new Float32Array(16 * PANEL_COLUMNS).fill(Number.NaN);
    winogradFilter(Float32Array.from([1, 2, 3, 4, 5, 6, 7, 8, 9]), 1, 1, packed);
    for (let k = 0; k < 16; k++) {
      expect(packed[k * PANEL_COLUMNS]).toBe(expected[k]);
      // The panel's other 7 columns are zeros.
      expect(Array.from(packed.subarray(k * PANEL_COLUMNS + 1, (k + 1) * PANEL_COLUMNS))).toEqual(new Array(7).fill(0));
    }
  });
});

/** A 3 × 3 convolution at stride 1 for the marked FusedConv2D. */
interface WinogradCase {
  readonly x: [number, number, number, number];
  readonly outChannels: number;
  readonly pad: ConvolutionPad;
  readonly bias: boolean;
  readonly activation: MultiplyAddActivation;
}

const CASES: WinogradCase[] = [
  // Odd outputs: the last row and column of tiles write half their outputs.
  { x: [1, 5, 7, 4], outChannels: 4, pad: 'same', bias: false, activation: 'linear' },
  { x: [1, 6, 6, 4], outChannels: 8, pad: 'same', bias: true, activation: 'linear' },
  { x: [2, 7, 9, 8], outChannels: 12, pad: 'valid', bias: true, activation: 'relu' },
  // Padding of 2 before: taps of the first tiles read two rows and columns of zeros.
  {
    x: [1, 6, 5, 4],
    outChannels: 20,
    pad: [
      [0, 0],
      [2, 1],
      [2, 0],
      [0, 0],
    ],
    bias: true,
    activation: 'relu6',
  },
  // SqueezeNet 1.1's fire modules: 55 × 55 × 16 → 64 and 13 × 13 × 64 → 256.
  { x: [1, 55, 55, 16], outChannels: 64, pad: 'same', bias: true, activation: 'relu' },
  { x: [1, 13, 13, 64], outChannels: 256, pad: 'same', bias: true, activation: 'relu' },
];

function inputsOf(c: WinogradCase, seed: number): Record<string, tf.Tensor> {
  const x = randomTensor(c.x, seed);
  const filter = randomTensor([3, 3, c.x[3], c.outChannels], seed + 1);
  return c.bias ? { x, filter, bias: randomTensor([c.outChannels], seed + 2) } : { x, filter };
}

const attrsOf = (c: WinogradCase, marked: boolean) => ({
  strides: 1,
  pad: c.pad,
  dataFormat: 'NHWC',
  dilations: 1,
  activation: c.activation,
  ...(marked ? { multiplyAdd: 'fused' } : {}),
});

/** `c` by winogradConvolution itself. */
function byWinograd(c: WinogradCase, inputs: Record<string, tf.Tensor>): tf.Tensor {
  const info = tf.backend_util.computeConv2DInfo(c.x, [3, 3, c.x[3], c.outChannels], 1, 1, c.pad, undefined, false, 'channelsLast');
  const shape = { ...info, batch: info.batchSize, top: info.padInfo.top, left: info.padInfo.left };
  const variant = { multiplyAdd: 'fused', bias: c.bias, activation: c.activation, windows: false, packedB: true } as const;
  const out = winogradConvolution(tf.backend() as BackendWasm, inputs.x!, inputs.filter!, inputs.bias, shape, variant);
  if (out === undefined) throw new Error('the Winograd routines did not run');
  return tf.engine().makeTensorFromTensorInfo(out);
}

const describeCase = (c: WinogradCase) => `${c.x.join('×')} → ${c.outChannels}, pad ${JSON.stringify(c.pad)}, ${c.bias ? 'bias' : 'no bias'}, ${c.activation}`;

describe('a marked 3 × 3 FusedConv2D at stride 1 on wasm', () => {
  it.each(CASES.map((c, i) => [describeCase(c), c, i] as const))("%s: is F(2 × 2, 3 × 3)'s, within float rounding of the cpu backend's", (_, c, i) => {
    const inputs = inputsOf(c, 10 * i);
    const marked = runKernel('FusedConv2D', inputs, attrsOf(c, true));
    const winograd = byWinograd(c, inputs);
    expect(Array.from(marked.dataSync())).toEqual(Array.from(winograd.dataSync()));
    expectRelativelyClose(marked, runCpuKernel('FusedConv2D', inputs, attrsOf(c, false)), 1e-5);
    tf.dispose([marked, winograd, ...Object.values(inputs)]);
  });

  it('transforms a filter once and frees the transformed copy with the filter', () => {
    const c = CASES[1]!;
    const inputs = inputsOf(c, 5);
    const backend = tf.backend();
    const before = backend.numDataIds();
    runKernel('FusedConv2D', inputs, attrsOf(c, true)).dispose();
    runKernel('FusedConv2D', inputs, attrsOf(c, true)).dispose();
    expect(backend.numDataIds()).toBe(before + 1);
    inputs.filter!.dispose();
    expect(backend.numDataIds()).toBe(before - 1);
    tf.dispose(Object.values(inputs));
  });

  it(`takes F(2 × 2, 3 × 3) from ${MIN_WINOGRAD_OUTPUTS} output positions on, and leaves fewer to the product of windows, which keeps the filter packed instead of transformed`, () => {
    const wasm = tf.backend() as BackendWasm;
    const channels = 8;
    const copyOf = (size: number, seed: number) => {
      const c: WinogradCase = { x: [1, size, size, channels], outChannels: channels, pad: 'same', bias: true, activation: 'relu' };
      const inputs = inputsOf(c, seed);
      const before = filterCopyBytes(wasm);
      const marked = runKernel('FusedConv2D', inputs, attrsOf(c, true));
      const bytes = filterCopyBytes(wasm) - before;
      expectRelativelyClose(marked, runCpuKernel('FusedConv2D', inputs, attrsOf(c, false)), 1e-5);
      tf.dispose([marked, ...Object.values(inputs)]);
      expect(filterCopyBytes(wasm)).toBe(before);
      return bytes;
    };
    expect(4 * 4).toBeLessThan(MIN_WINOGRAD_OUTPUTS);
    expect(6 * 6).toBeGreaterThanOrEqual(MIN_WINOGRAD_OUTPUTS);
    // 4 × 4: the filter [72, 8] in one panel of 8 columns; 6 × 6: 16 components [8, 8].
    expect(copyOf(4, 40)).toBe(9 * channels * PANEL_COLUMNS * 4);
    expect(copyOf(6, 50)).toBe(16 * channels * PANEL_COLUMNS * 4);
  });

  it.skipIf(Math.min(availableParallelism(), MAX_WASM_THREADS) < 2 || process.env.POPTFJS_WASM_THREADS !== undefined)(
    'gives the same numbers bit for bit on one thread and with the helper thread',
    () => {
      const c = CASES[4]!;
      const inputs = inputsOf(c, 3);
      const [one, withHelper] = onOneThreadAndWithHelper(() => Array.from(runKernel('FusedConv2D', inputs, attrsOf(c, true)).dataSync()));
      expect(withHelper).toEqual(one);
      tf.dispose(Object.values(inputs));
    },
  );
});
