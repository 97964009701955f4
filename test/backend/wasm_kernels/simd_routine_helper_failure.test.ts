/**
 * A chunk that fails on the helper thread of poptfjs's WebAssembly SIMD
 * routines alone (its own file: afterwards the helper is out of use for the
 * rest of the process): the call throws with the helper's own error, and
 * later calls compute on the calling thread, with the same bits.
 */
import * as tf from '@tensorflow/tfjs';
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';
import { describe, expect, it } from 'vitest';
import { POPTFJS_KERNELS } from '../../../lib/backend/kernel_catalogue/kernel_catalogue.js';
import { switchableWasmThreads, withWasmThreads } from '../../../lib/backend/wasm_thread_pool.js';
import { failSimdRoutineHelperOnNextChunk, simdRoutineHelperChunks } from '../../../lib/backend/wasm_kernels/simd_routine_threads.js';
import { wasmMemory } from '../../../lib/backend/wasm_kernels/wasm_simd_routine.js';
import { randomTensor, useWasmTrainingBackend } from './kernel_reference.js';

await useWasmTrainingBackend();
const pool = switchableWasmThreads();

describe.skipIf(pool === undefined || pool < 2)("a chunk that fails on the SIMD routines' helper thread", () => {
  it('makes the call throw with the helper’s error, and later calls compute on the calling thread with the same bits', () => {
    const memory = wasmMemory(tf.backend() as BackendWasm)!;
    const [dy, x] = [randomTensor([64, 28, 28, 16], 3), randomTensor([64, 28, 28, 16], 4)];
    const call = () => tf.engine().runKernel(POPTFJS_KERNELS.reluGrad, { dy, x }, {}) as tf.Tensor;
    const bits = (t: tf.Tensor) => Array.from(new Uint32Array((t.dataSync() as Float32Array).slice().buffer));
    const one = withWasmThreads(1, call);
    const expected = bits(one);
    one.dispose();
    // The helper starts on the first call split between the threads.
    withWasmThreads(pool!, call).dispose();
    expect(failSimdRoutineHelperOnNextChunk(memory)).toBe(true);
    // The helper may miss calls it wakes too late for; it fails the first chunk it computes.
    let thrown: unknown;
    for (let attempt = 0; attempt < 200 && thrown === undefined; attempt++) {
      try {
        withWasmThreads(pool!, call).dispose();
      } catch (error) {
        thrown = error;
      }
    }
    expect((thrown as Error).message).toBe(
      "the helper thread of poptfjs's WebAssembly SIMD routines failed in reluGrad: Error: a failure asked for by failSimdRoutineHelperOnNextChunk; later calls compute on the calling thread",
    );
    const chunks = simdRoutineHelperChunks(memory);
    const after = withWasmThreads(pool!, call);
    expect(bits(after)).toEqual(expected);
    expect(simdRoutineHelperChunks(memory)).toBe(chunks);
    tf.dispose([after, dy, x]);
  });
});
