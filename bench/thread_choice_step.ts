/**
 * One case of the wasm thread benchmark (wasm_thread_choice.ts), in a
 * process of its own since the pool's size is fixed when the backend starts:
 * trains the model named by its argument (`tiny-mlp`, `mlp` or `cnn`) with
 * poptfjs's `trainingModel` on the wasm backend. A line `burst <ms> <n>` on
 * stdin runs steps back to back, as a training loop does: untimed ones for
 * `ms` milliseconds (at least one), then `n` timed ones, and is answered by
 * one line, the JSON array of the timed steps' times in milliseconds. Its
 * first line says how its backend computes: `{"threads": n, "switchable":
 * bool}` (the pool's threads, and whether kernels move between the pool and
 * one thread).
 */
import { createInterface } from 'node:readline';
import { initBackend, tf, wasmThreads } from 'poptfjs';
import { switchableWasmThreads } from '../lib/backend/wasm_thread_pool.js';
import { CNN } from './cnn_training_step.js';
import { MLP } from './mlp_training_step.js';
import type { TrainingProblem } from './plain_tfjs_step.js';
import { poptfjsTrainingCase } from './poptfjs_training_step.js';

/** A tiny MLP 16-32-10 on a batch of 16: every kernel takes microseconds. */
const TINY_MLP: TrainingProblem = {
  model() {
    const init = (seed: number) => tf.initializers.glorotUniform({ seed });
    return tf.sequential({
      layers: [
        tf.layers.dense({ units: 32, inputShape: [16], activation: 'relu', kernelInitializer: init(1) }),
        tf.layers.dense({ units: 10, activation: 'softmax', kernelInitializer: init(2) }),
      ],
    });
  },
  batch() {
    const x = tf.randomNormal([16, 16], 0, 1, 'float32', 21);
    const y = tf.oneHot(tf.randomUniform([16], 0, 10, 'int32', 22), 10).toFloat();
    return { x, y };
  },
};

/** The models the benchmark trains, by the name the parent passes. */
const THREAD_BENCH_MODELS = { 'tiny-mlp': TINY_MLP, mlp: MLP, cnn: CNN } as const;

const problem = THREAD_BENCH_MODELS[process.argv[2] as keyof typeof THREAD_BENCH_MODELS];
if (!problem) throw new Error(`unknown model '${process.argv[2]}'; expected one of ${Object.keys(THREAD_BENCH_MODELS).join(', ')}`);
await initBackend('wasm');
const step = poptfjsTrainingCase(problem);
console.log(JSON.stringify({ threads: wasmThreads(), switchable: switchableWasmThreads() !== undefined }));
for await (const line of createInterface({ input: process.stdin })) {
  const burst = /^burst (\d+) (\d+)$/.exec(line);
  if (!burst) break;
  const settled = performance.now() + Number(burst[1]);
  do await step.step();
  while (performance.now() < settled);
  const times: number[] = [];
  for (let i = 0; i < Number(burst[2]); i++) {
    const start = performance.now();
    await step.step();
    times.push(performance.now() - start);
  }
  console.log(JSON.stringify(times));
}
