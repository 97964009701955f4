/**
 * A program that starts the helper thread of poptfjs's WebAssembly SIMD
 * routines (a ReluGrad of [64, 28, 28, 16] on the threaded wasm backend,
 * until the helper has computed a chunk, for at most 20 s: the worker takes
 * tens of milliseconds to start, and calls before that run on the calling
 * thread alone), prints how many chunks it computed, and ends without
 * `process.exit`: it must exit all the same.
 */
import * as tf from '@tensorflow/tfjs';
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';
import { POPTFJS_KERNELS } from '../../../lib/backend/kernel_catalogue/kernel_catalogue.js';
import { initBackend } from '../../../lib/backend/backend_selection.js';
import { registerWasmTrainingKernels } from '../../../lib/backend/wasm_kernels/index.js';
import { simdRoutineHelperChunks } from '../../../lib/backend/wasm_kernels/simd_routine_threads.js';
import { wasmMemory } from '../../../lib/backend/wasm_kernels/wasm_simd_routine.js';

await initBackend('wasm');
registerWasmTrainingKernels();
const memory = wasmMemory(tf.backend() as BackendWasm)!;
const [dy, x] = [tf.randomNormal([64, 28, 28, 16]), tf.randomNormal([64, 28, 28, 16])];
const deadline = performance.now() + 20_000;
while (simdRoutineHelperChunks(memory) === 0 && performance.now() < deadline) {
  (tf.engine().runKernel(POPTFJS_KERNELS.reluGrad, { dy, x }, {}) as tf.Tensor).dispose();
}
console.log(simdRoutineHelperChunks(memory));
