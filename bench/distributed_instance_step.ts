/**
 * One instance of the data-parallel benchmark (distributed_instances.ts),
 * started by `poptfjs run`: trains an MLP on its share of a fixed global
 * batch, one step each time the number in the file `BENCH_STEP_FILE` grows
 * (every instance reads it, waiting on a timer rather than in an MPI call,
 * which would keep a core busy while the other case of the benchmark runs);
 * `end` in it ends every instance. After each step, instance 0 prints a JSON
 * line: the step's wall-clock time and the time it spent in `MPI_Allreduce`
 * calls (the status of the iteration and the gradient sum, waiting for the
 * other instances included), both in milliseconds.
 */
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { optim, popdist, tf, trainingModel } from 'poptfjs';
import { mpiWorld } from '../lib/distributed/mpi_communicator.js';

/** Samples per micro-batch, per replica. */
const MICRO_BATCH = 32;

const instance = popdist.getInstanceIndex();
const world = popdist.getNumInstances() > 1 ? mpiWorld() : undefined;

// The all-reduce calls of the training step, timed.
let allReduceMs = 0;
if (world) {
  const allReduce = world.allReduceSumSync.bind(world);
  world.allReduceSumSync = (values) => {
    const start = performance.now();
    try {
      return allReduce(values);
    } finally {
      allReduceMs += performance.now() - start;
    }
  };
}

const model = tf.sequential({
  layers: [
    tf.layers.dense({ units: 512, inputShape: [256], activation: 'relu', kernelInitializer: tf.initializers.glorotUniform({ seed: 1 }) }),
    tf.layers.dense({ units: 512, activation: 'relu', kernelInitializer: tf.initializers.glorotUniform({ seed: 2 }) }),
    tf.layers.dense({ units: 10, kernelInitializer: tf.initializers.glorotUniform({ seed: 3 }) }),
  ],
});
const executor = trainingModel(model, { options: popdist.Options(), loss: 'meanSquaredError', optimizer: new optim.SGD(model, { lr: 0.01 }) });
const samples = MICRO_BATCH * popdist.getNumLocalReplicas();
const x = tf.randomNormal([samples, 256], 0, 1, 'float32', 1 + instance);
const y = tf.randomNormal([samples, 10], 0, 1, 'float32', 101 + instance);

const stepFile = process.env.BENCH_STEP_FILE;
if (!stepFile) throw new Error('BENCH_STEP_FILE must name the file the benchmark writes its step count to');
let steps = 0;

/** Waits until the benchmark asks for another step (true) or the end (false). */
async function nextCommand(): Promise<boolean> {
  for (;;) {
    const text = readFileSync(stepFile!, 'utf8').trim();
    if (text === 'end') return false;
    if (Number(text) > steps) return true;
    await sleep(1);
  }
}

while (await nextCommand()) {
  allReduceMs = 0;
  const start = performance.now();
  const [output, loss] = await executor(x, y);
  loss.dataSync();
  const stepMs = performance.now() - start;
  tf.dispose([output as tf.Tensor, loss]);
  steps++;
  if (instance === 0) console.log(JSON.stringify({ stepMs, allReduceMs }));
}
