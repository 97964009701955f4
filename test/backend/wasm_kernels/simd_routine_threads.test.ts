/**
 * poptfjs's WebAssembly SIMD routines split between the calling thread and
 * a helper thread on the threaded wasm build: the same bits as on the
 * calling thread alone (the CNN's sizes and odd ones), the calling thread
 * alone where the memory is not shared or the thread choice gives one
 * thread, and an error, not a hang, when the helper dies holding a chunk.
 */
import * as tf from '@tensorflow/tfjs';
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';
import { describe, expect, it } from 'vitest';
import { POPTFJS_KERNELS } from '../../../lib/backend/kernel_catalogue/kernel_catalogue.js';
import { switchableWasmThreads, withWasmThreads } from '../../../lib/backend/wasm_thread_pool.js';
import { reluGradSimd } from '../../../lib/backend/wasm_kernels/relu_passes_simd.js';
import { exitSimdRoutineHelperOnNextChunk, HELPER_TIMEOUT_MS, simdRoutineHelperChunks } from '../../../lib/backend/wasm_kernels/simd_routine_threads.js';
import { type WasmMemory, wasmMemory } from '../../../lib/backend/wasm_kernels/wasm_simd_routine.js';
import { runProgram } from '../../run_program.js';
import { randomTensor, useWasmTrainingBackend } from './kernel_reference.js';

/** The WebAssembly memory constructor (the WebAssembly API is not in this project's type libraries). */
const WasmMemoryOf = (globalThis as unknown as { WebAssembly: { Memory: new (descriptor: { initial: number }) => WasmMemory } }).WebAssembly.Memory;

const bitsOf = (ts: tf.Tensor[]) => ts.flatMap((t) => Array.from(new Uint32Array((t.dataSync() as Float32Array).slice().buffer)));

/** A kernel call of the CNN's sizes or odd ones, returning its outputs. */
type KernelCall = () => tf.Tensor[];

const addRelu =
  (shape: number[]): KernelCall =>
  () => {
    const [a, b] = [randomTensor(shape, 1), randomTensor([shape.at(-1)!], 2)];
    const out = tf.engine().runKernel(POPTFJS_KERNELS.addRelu, { a, b }, {}) as tf.Tensor[];
    tf.dispose([a, b]);
    return out;
  };

const reluGrad =
  (shape: number[]): KernelCall =>
  () => {
    const [dy, x] = [randomTensor(shape, 3), randomTensor(shape, 4)];
    const out = tf.engine().runKernel(POPTFJS_KERNELS.reluGrad, { dy, x }, {}) as tf.Tensor;
    tf.dispose([dy, x]);
    return [out];
  };

const maxPoolGrad =
  (shape: number[], pad: 'same' | 'valid'): KernelCall =>
  () => {
    const input = randomTensor(shape, 5);
    const output = tf.maxPool(input as tf.Tensor4D, 2, 2, pad);
    const dy = randomTensor(output.shape, 6);
    const out = tf.engine().runKernel('MaxPoolGrad', { dy, input, output }, { filterSize: 2, strides: 2, pad }) as tf.Tensor;
    tf.dispose([input, output, dy]);
    return [out];
  };

const filterGradient =
  (shape: number[], filter: [number, number, number, number], stride: number, pad: 'same' | 'valid'): KernelCall =>
  () => {
    const x = randomTensor(shape, 7);
    const w = randomTensor(filter, 8);
    const y = tf.conv2d(x as tf.Tensor4D, w as tf.Tensor4D, stride, pad);
    const dy = randomTensor(y.shape, 9);
    const out = tf.engine().runKernel('Conv2DBackpropFilter', { x, dy }, { strides: stride, pad, dataFormat: 'NHWC', dilations: 1, filterShape: filter }) as tf.Tensor;
    tf.dispose([x, w, y, dy]);
    return [out];
  };

const CASES: ReadonlyArray<[string, KernelCall]> = [
  ['AddRelu [64, 28, 28, 16]', addRelu([64, 28, 28, 16])],
  ['AddRelu [64, 14, 14, 32]', addRelu([64, 14, 14, 32])],
  ['AddRelu [3, 97, 101, 13]', addRelu([3, 97, 101, 13])],
  ['ReluGrad [64, 28, 28, 16]', reluGrad([64, 28, 28, 16])],
  ['ReluGrad [300001]', reluGrad([300_001])],
  ['MaxPoolGrad [64, 28, 28, 16]', maxPoolGrad([64, 28, 28, 16], 'valid')],
  ['MaxPoolGrad [61, 21, 23, 8] same', maxPoolGrad([61, 21, 23, 8], 'same')],
  ['Conv2DBackpropFilter [64, 28, 28, 1] 3×3 → 16', filterGradient([64, 28, 28, 1], [3, 3, 1, 16], 1, 'same')],
  ['Conv2DBackpropFilter [37, 31, 29, 3] 3×3 → 32 stride 2', filterGradient([37, 31, 29, 3], [3, 3, 3, 32], 2, 'valid')],
];

await useWasmTrainingBackend();
/** The pool's threads, when the threaded build runs and kernels can be moved between its pool and one thread. */
const pool = switchableWasmThreads();

describe.skipIf(pool === undefined || pool < 2)("poptfjs's SIMD routines on two threads", () => {
  const memory = wasmMemory(tf.backend() as BackendWasm)!;

  /** `call`'s outputs on the pool's threads, once the helper has computed a part of them (the helper may miss a call it wakes too late for). */
  function onTwoThreads(call: KernelCall): number[] {
    for (let attempt = 0; attempt < 50; attempt++) {
      const before = simdRoutineHelperChunks(memory);
      const out = withWasmThreads(pool!, call);
      const bits = bitsOf(out);
      tf.dispose(out);
      if (simdRoutineHelperChunks(memory) > before) return bits;
    }
    throw new Error('the helper thread computed no chunk in 50 calls');
  }

  it.each(CASES)('%s gives the same bits on two threads as on one', (_name, call) => {
    const one = withWasmThreads(1, () => {
      const before = simdRoutineHelperChunks(memory);
      const out = call();
      expect(simdRoutineHelperChunks(memory)).toBe(before);
      const bits = bitsOf(out);
      tf.dispose(out);
      return bits;
    });
    expect(onTwoThreads(call)).toEqual(one);
  });

  it('runs on the calling thread alone where the memory is not shared', () => {
    const unshared = new WasmMemoryOf({ initial: 48 });
    const count = 200_003;
    const [dy, x, out] = [0, 4 * count, 8 * count];
    const heap = new Float32Array(unshared.buffer);
    for (let i = 0; i < count; i++) {
      heap[i] = i + 1;
      heap[count + i] = (i % 3) - 1;
    }
    expect(withWasmThreads(pool!, () => reluGradSimd(unshared, dy, x, out, count))).toBe(true);
    for (const i of [0, 1, 2, 3, count - 1]) expect(heap[2 * count + i]).toBe((i % 3) - 1 > 0 ? i + 1 : 0);
    expect(simdRoutineHelperChunks(unshared)).toBe(0);
  });

  it('lets no helper keep the process from exiting', () => {
    const result = runProgram('test/backend/wasm_kernels/simd_routine_helper_program.ts', [], {}, 60_000);
    expect(result.stderr).not.toContain('Error');
    expect(result.status).toBe(0);
    expect(Number(result.stdout.trim())).toBeGreaterThan(0);
  });

  it('throws within seconds when the helper dies holding a chunk, then computes on the calling thread', () => {
    const call = reluGrad([64, 28, 28, 16]);
    const expected = withWasmThreads(1, () => {
      const out = call();
      const bits = bitsOf(out);
      tf.dispose(out);
      return bits;
    });
    expect(exitSimdRoutineHelperOnNextChunk(memory)).toBe(true);
    const started = performance.now();
    let thrown: unknown;
    for (let attempt = 0; attempt < 50 && thrown === undefined; attempt++) {
      try {
        tf.dispose(withWasmThreads(pool!, call));
      } catch (error) {
        thrown = error;
      }
    }
    expect((thrown as Error).message).toBe(
      `the helper thread of poptfjs's WebAssembly SIMD routines stopped: it did not finish its part of reluGrad within ${HELPER_TIMEOUT_MS} ms`,
    );
    expect(performance.now() - started).toBeLessThan(HELPER_TIMEOUT_MS + 5000);
    const chunks = simdRoutineHelperChunks(memory);
    const out = withWasmThreads(pool!, call);
    expect(bitsOf(out)).toEqual(expected);
    expect(simdRoutineHelperChunks(memory)).toBe(chunks);
    tf.dispose(out);
  });
});
