/**
 * The wasm backend on all cores. In Node, poptfjs starts tfjs's threaded
 * wasm build (tfjs itself starts it only in browsers), on as many threads as
 * the machine has cores or as `POPTFJS_WASM_THREADS` says; unless that
 * variable is set, only kernels large enough to gain use the threads. This trains a
 * small CNN and prints the threads, the losses and the time per step; run it
 * again with `POPTFJS_WASM_THREADS=1` to compare: the losses are the same,
 * bit for bit, and the steps slower.
 *
 * Run: npx tsx examples/wasm-threads.ts
 *      POPTFJS_WASM_THREADS=1 npx tsx examples/wasm-threads.ts
 */
import { optim, tf, trainingModel, wasmThreads } from 'poptfjs';

const STEPS = 10;

const init = (seed: number) => tf.initializers.glorotUniform({ seed });
const model = tf.sequential({
  layers: [
    tf.layers.conv2d({ inputShape: [28, 28, 1], filters: 16, kernelSize: 3, padding: 'same', activation: 'relu', kernelInitializer: init(1) }),
    tf.layers.maxPooling2d({ poolSize: 2 }),
    tf.layers.conv2d({ filters: 32, kernelSize: 3, padding: 'same', activation: 'relu', kernelInitializer: init(2) }),
    tf.layers.flatten(),
    tf.layers.dense({ units: 10, activation: 'softmax', kernelInitializer: init(3) }),
  ],
});
const x = tf.randomNormal([64, 28, 28, 1], 0, 1, 'float32', 4);
const y = tf.oneHot(tf.randomUniform([64], 0, 10, 'int32', 5), 10).toFloat();
const executor = trainingModel(model, { loss: 'categoricalCrossentropy', optimizer: new optim.SGD(model, { lr: 0.05 }) });
await executor.compile(x, y);

const losses: number[] = [];
const started = performance.now();
for (let step = 0; step < STEPS; step++) {
  const [, loss] = await executor(x, y);
  losses.push(loss.dataSync()[0]!);
}
const msPerStep = (performance.now() - started) / STEPS;

console.log(`wasm threads: ${wasmThreads()}`);
console.log(`losses: ${losses.join(' ')}`);
console.log(`ms/step: ${msPerStep.toFixed(1)}`);
