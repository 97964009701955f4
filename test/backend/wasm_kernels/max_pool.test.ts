import { availableParallelism } from 'node:os';
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { computeOnWasmThreads, routinesOnlyOnWasmThreads, switchableWasmThreads, wasmComputeThreads } from '../../../lib/backend/wasm_thread_pool.js';
import { MAX_WASM_THREADS } from '../../../lib/backend/wasm_threads.js';
import { randomTensor, runCpuKernel, runKernel, useWasmTrainingBackend } from './kernel_reference.js';

beforeAll(useWasmTrainingBackend);

/** Runs `fn` with XNNPACK's pool left to poptfjs's routines, then puts back the threads of before. */
function withRoutinesOnly<T>(fn: () => T): T {
  const before = wasmComputeThreads()!;
  computeOnWasmThreads(switchableWasmThreads()!, true);
  try {
    expect(routinesOnlyOnWasmThreads()).toBe(true);
    return fn();
  } finally {
    computeOnWasmThreads(before);
  }
}

const CASES: Array<{
  x: number[];
  filterSize: number | [number, number];
  strides: number | [number, number];
  pad: 'same' | 'valid' | number;
  dimRoundingMode?: 'ceil' | 'floor';
}> = [
  { x: [1, 111, 111, 64], filterSize: 3, strides: 2, pad: 'valid' },
  { x: [2, 9, 9, 8], filterSize: 3, strides: 2, pad: 'same' },
  { x: [1, 8, 7, 4], filterSize: [2, 3], strides: [1, 2], pad: 'valid' },
  { x: [2, 10, 10, 12], filterSize: 3, strides: 2, pad: 1, dimRoundingMode: 'ceil' },
  { x: [1, 5, 5, 16], filterSize: 5, strides: 1, pad: 'same' },
];

describe.skipIf(Math.min(availableParallelism(), MAX_WASM_THREADS) < 2 || process.env.POPTFJS_WASM_THREADS !== undefined)(
  "MaxPool on wasm while XNNPACK's pool is left to poptfjs's routines",
  () => {
    it.each(CASES.map((c) => [`${c.x.join('×')}, filter ${JSON.stringify(c.filterSize)}, strides ${JSON.stringify(c.strides)}, pad ${c.pad}`, c] as const))(
      "%s: gives the cpu backend's values, and XNNPACK's",
      (_, c) => {
        const x = randomTensor(c.x, 5);
        const attrs = { filterSize: c.filterSize, strides: c.strides, pad: c.pad, dimRoundingMode: c.dimRoundingMode };
        const byRoutine = withRoutinesOnly(() => runKernel('MaxPool', { x }, attrs));
        const expected = runCpuKernel('MaxPool', { x }, attrs);
        expect(byRoutine.shape).toEqual(expected.shape);
        expect(Array.from(byRoutine.dataSync())).toEqual(Array.from(expected.values));
        if (c.dimRoundingMode !== 'ceil') {
          const byXnnpack = runKernel('MaxPool', { x }, attrs);
          expect(Array.from(byXnnpack.dataSync())).toEqual(Array.from(expected.values));
          byXnnpack.dispose();
        }
        tf.dispose([x, byRoutine]);
      },
    );

    it('keeps the first of equal values and never picks a NaN, as the cpu kernel', () => {
      const x = tf.tensor4d([Number.NaN, 1, -0, 0, 2, Number.NaN, 0, -0], [1, 2, 1, 4]);
      const attrs = { filterSize: [2, 1], strides: 1, pad: 'valid' };
      const out = withRoutinesOnly(() => runKernel('MaxPool', { x }, attrs));
      expect(Array.from(out.dataSync())).toEqual(Array.from(runCpuKernel('MaxPool', { x }, attrs).values));
      expect(Object.is(out.dataSync()[2], -0)).toBe(true);
      tf.dispose([x, out]);
    });
  },
);
