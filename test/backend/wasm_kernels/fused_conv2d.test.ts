import { availableParallelism } from 'node:os';
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { panelColumns } from '../../../lib/backend/wasm_kernels/fused_conv2d.js';
import { relaxedSimdSupported } from '../../../lib/backend/wasm_kernels/wasm_simd_routine.js';
import { MAX_WASM_THREADS } from '../../../lib/backend/wasm_threads.js';
import { computeOnWasmThreads, switchableWasmThreads, wasmComputeThreads, withWasmThreads } from '../../../lib/backend/wasm_thread_pool.js';
import { CONVOLUTION_CASES, type ConvolutionCase, randomTensor, runCpuKernel, runKernel, expectRelativelyClose, useWasmTrainingBackend } from './kernel_reference.js';
import { withRelaxedSimd } from '../../helpers.js';

withRelaxedSimd();
beforeAll(useWasmTrainingBackend);

/** A convolution case with a fused bias and activation. */
interface FusedCase extends ConvolutionCase {
  readonly bias: boolean;
  readonly activation: 'linear' | 'relu' | 'relu6';
}

const CASES: FusedCase[] = [
  ...CONVOLUTION_CASES.map((c, i) => ({ ...c, bias: i % 2 === 0, activation: i % 3 === 0 ? ('linear' as const) : ('relu' as const) })),
  // Clipped at 6 (MobileNetV2's activation), windows and a 1 × 1 convolution read in place.
  { x: [1, 9, 9, 8], filter: [3, 3, 8, 12], strides: 2, pad: 'same', bias: true, activation: 'relu6' },
  { x: [1, 7, 7, 32], filter: [1, 1, 32, 16], strides: 1, pad: 'valid', bias: true, activation: 'relu6' },
  // A 1 × 1 convolution reads its input in place; the filter (600 KiB) is cut into panels of columns, the last with 4.
  { x: [1, 10, 10, 256], filter: [1, 1, 256, 604], strides: 1, pad: 'valid', bias: true, activation: 'relu' },
  { x: [2, 7, 9, 16], filter: [3, 3, 16, 12], strides: 1, pad: 'same', bias: true, activation: 'relu' },
  { x: [1, 15, 13, 8], filter: [3, 3, 8, 20], strides: 2, pad: 'valid', bias: false, activation: 'relu' },
  { x: [1, 12, 12, 3], filter: [7, 7, 3, 8], strides: 2, pad: 3, bias: true, activation: 'linear' },
  // Rounded up, the output has a row and a column more than XNNPACK's (which leaves them unwritten).
  { x: [2, 8, 8, 2], filter: [3, 3, 2, 4], strides: 2, pad: 1, dimRoundingMode: 'ceil', bias: true, activation: 'relu' },
];

function describeCase(c: FusedCase): string {
  return `${c.x.join('×')} * ${c.filter.join('×')}, strides ${JSON.stringify(c.strides)}, pad ${JSON.stringify(c.pad)}, ${c.bias ? 'bias' : 'no bias'}, ${c.activation}`;
}

function inputsOf(c: FusedCase, seed: number): Record<string, tf.Tensor> {
  const x = randomTensor(c.x, seed);
  const filter = randomTensor(c.filter, seed + 1);
  return c.bias ? { x, filter, bias: randomTensor([c.filter[3]!], seed + 2) } : { x, filter };
}

function attrsOf(c: FusedCase, marked: boolean): object {
  return {
    strides: c.strides,
    pad: c.pad,
    dataFormat: 'NHWC',
    dilations: 1,
    dimRoundingMode: c.dimRoundingMode,
    activation: c.activation,
    ...(marked ? { multiplyAdd: 'fused' } : {}),
  };
}

describe('FusedConv2D on wasm with fused multiply-adds', () => {
  it('runs where the engine compiles relaxed SIMD', () => {
    expect(relaxedSimdSupported()).toBe(true);
  });

  it.each(CASES.map((c, i) => [describeCase(c), c, i] as const))('%s: gives the cpu backend’s FusedConv2D within float rounding', (_, c, i) => {
    const inputs = inputsOf(c, 10 * i);
    const marked = runKernel('FusedConv2D', inputs, attrsOf(c, true));
    const expected = runCpuKernel('FusedConv2D', inputs, attrsOf(c, false));
    if (c.filter[3]! % 4 === 0) {
      expectRelativelyClose(marked, expected, 1e-5);
    } else if (c.dimRoundingMode !== 'ceil') {
      // Output channels not in fours: the backend's own kernel, bit for bit (which, rounded up, leaves its last row
      // and column unwritten).
      const own = runKernel('FusedConv2D', inputs, attrsOf(c, false));
      expect(Array.from(marked.dataSync())).toEqual(Array.from(own.dataSync()));
      own.dispose();
    }
    tf.dispose([marked, ...Object.values(inputs)]);
  });

  it('differs from the separate multiplies and adds in the last bits only where a sum rounds differently', () => {
    const c: FusedCase = { x: [1, 16, 16, 32], filter: [3, 3, 32, 32], strides: 1, pad: 'same', bias: true, activation: 'linear' };
    const inputs = inputsOf(c, 7);
    const fused = runKernel('FusedConv2D', inputs, attrsOf(c, true)).dataSync();
    const separate = runKernel('FusedConv2D', inputs, attrsOf(c, false)).dataSync();
    const differing = fused.filter((v, i) => v !== separate[i]).length;
    expect(differing).toBeGreaterThan(0);
    expect(differing).toBeLessThan(fused.length);
    tf.dispose(Object.values(inputs));
  });

  it.skipIf(Math.min(availableParallelism(), MAX_WASM_THREADS) < 2 || process.env.POPTFJS_WASM_THREADS !== undefined)(
    'gives the same numbers bit for bit on one thread, on the pool and with the pool left to the routines',
    () => {
      const pool = switchableWasmThreads()!;
      expect(pool).toBeGreaterThan(1);
      for (const c of [CASES.at(-4)!, CASES.at(-3)!]) {
        const inputs = inputsOf(c, 3);
        const run = () => Array.from(runKernel('FusedConv2D', inputs, attrsOf(c, true)).dataSync());
        const one = withWasmThreads(1, run);
        expect(withWasmThreads(pool, run)).toEqual(one);
        const before = wasmComputeThreads()!;
        computeOnWasmThreads(pool, true);
        try {
          expect(run()).toEqual(one);
        } finally {
          computeOnWasmThreads(before);
        }
        tf.dispose(Object.values(inputs));
      }
    },
  );

  it('packs a filter once, reads the packed copy while the filter lives and frees it with the filter', () => {
    const c: FusedCase = { x: [1, 6, 6, 8], filter: [3, 3, 8, 12], strides: 1, pad: 'same', bias: true, activation: 'relu' };
    const inputs = inputsOf(c, 21);
    const backend = tf.backend();
    const before = backend.numDataIds();
    const first = runKernel('FusedConv2D', inputs, attrsOf(c, true));
    first.dispose();
    // The packed copy: one more data id than its tensors hold.
    expect(backend.numDataIds()).toBe(before + 1);
    const second = runKernel('FusedConv2D', inputs, attrsOf(c, true));
    expect(backend.numDataIds()).toBe(before + 2);
    expectRelativelyClose(second, runCpuKernel('FusedConv2D', inputs, attrsOf(c, false)), 1e-5);
    second.dispose();
    inputs.filter!.dispose();
    expect(backend.numDataIds()).toBe(before - 1);
    // A new filter, with other values, is packed anew.
    const other = { ...inputs, filter: randomTensor(c.filter, 99) };
    const third = runKernel('FusedConv2D', other, attrsOf(c, true));
    expectRelativelyClose(third, runCpuKernel('FusedConv2D', other, attrsOf(c, false)), 1e-5);
    tf.dispose([third, ...Object.values(other)]);
  });

  it('packs a filter read under two shapes (a reshape shares its data) once for each', () => {
    const c: FusedCase = { x: [1, 6, 6, 8], filter: [3, 3, 8, 16], strides: 1, pad: 'same', bias: false, activation: 'linear' };
    const inputs = inputsOf(c, 31);
    const reshaped: FusedCase = { ...c, x: [1, 6, 6, 16], filter: [3, 3, 16, 8] };
    const other = { x: randomTensor(reshaped.x, 32), filter: inputs.filter!.reshape(reshaped.filter) };
    for (const [k, ins] of [[c, inputs] as const, [reshaped, other] as const, [c, inputs] as const]) {
      const marked = runKernel('FusedConv2D', ins, attrsOf(k, true));
      expectRelativelyClose(marked, runCpuKernel('FusedConv2D', ins, attrsOf(k, false)), 1e-5);
      marked.dispose();
    }
    tf.dispose([...Object.values(inputs), ...Object.values(other)]);
  });

  it('cuts a filter of more than 512 KiB into panels of whole vectors of 8 columns', () => {
    expect(panelColumns(256, 500)).toBe(500);
    expect(panelColumns(256, 604)).toBe(512);
    expect(panelColumns(4608, 512)).toBe(24);
    expect(panelColumns(100_000, 64)).toBe(8);
  });
});
