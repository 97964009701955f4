/**
 * Trains a small dense model with Adam for a few steps and prints its final
 * weights as one JSON line.
 *
 *   train.ts <replicas> <accumulation> as-instances <N>  one process, replicationFactor(replicas), reading the global batches N instances read
 *   train.ts <replicas> <accumulation> instances [dir]    under mpiexec -n N: N instances of replicationFactor(replicas / N) each
 *
 * With `dir`, each instance then saves a checkpoint and exports the
 * executable to `dir/checkpoint-<rank>` and `dir/export-<rank>` (only
 * instance 0 writes).
 *
 * Each instance reads its consecutive block of the samples from the
 * DataLoader (opts.Distributed.configureProcessId, as PopTorch splits a
 * dataset); a global batch is each instance's next batch. The single process
 * reads the samples in the order that makes its batches those global
 * batches. Instances start from other initial weights (seeded by their
 * rank): the run must start from instance 0's.
 */
import * as tf from '@tensorflow/tfjs';
import { initBackend } from '../../../lib/backend/backend_selection.js';
import { DataLoader } from '../../../lib/data/data_loader.js';
import { mpiWorld } from '../../../lib/distributed/mpi_communicator.js';
import { trainingModel } from '../../../lib/executor/model_wrappers.js';
import { Options } from '../../../lib/options/options.js';
import { Adam } from '../../../optim/adam.js';

const [replicasArg, accumulationArg, mode, modeArg] = process.argv.slice(2);
const dir = mode === 'instances' ? modeArg : undefined;
const totalReplicas = Number(replicasArg);
const accumulation = Number(accumulationArg);
await initBackend();
const world = mode === 'instances' ? mpiWorld() : undefined;
const rank = world?.rank ?? 0;
const instances = world?.size ?? 1;

const opts = new Options().replicationFactor(totalReplicas / instances).randomSeed(7);
opts.Training.gradientAccumulation(accumulation);
if (world) opts.Distributed.configureProcessId(rank, instances);

const model = tf.sequential({
  layers: [
    tf.layers.dense({ units: 3, inputShape: [4], activation: 'tanh', kernelInitializer: tf.initializers.glorotUniform({ seed: 1 + rank }) }),
    tf.layers.dense({ units: 1, kernelInitializer: tf.initializers.glorotUniform({ seed: 11 + rank }) }),
  ],
});
const executor = trainingModel(model, { options: opts, loss: 'meanSquaredError', optimizer: new Adam(model, { lr: 0.05 }) });

const globalBatches = 3;
const samples = globalBatches * totalReplicas * accumulation;
const x = tf.tensor2d(
  Array.from({ length: samples * 4 }, (_, i) => Math.sin(i * 0.37)),
  [samples, 4],
);
const y = tf.tensor2d(
  Array.from({ length: samples }, (_, i) => Math.cos(i * 0.91)),
  [samples, 1],
);
/**
 * The order of the samples whose consecutive batches of `instances × batch`
 * are the global batches `instances` instances make when each reads its
 * consecutive block in batches of `batch`.
 */
function instancesOrder(batch: number, instances: number): number[] {
  const block = batch * Math.floor(samples / (batch * instances));
  const order: number[] = [];
  for (let start = 0; start < block; start += batch) for (let p = 0; p < instances; p++) for (let i = 0; i < batch; i++) order.push(p * block + start + i);
  return order;
}
const [inputs, targets] =
  mode === 'as-instances'
    ? tf.tidy(() => {
        const order = tf.tensor1d(instancesOrder((totalReplicas / Number(modeArg)) * accumulation, Number(modeArg)), 'int32');
        return [tf.gather(x, order), tf.gather(y, order)];
      })
    : [x, y];
let steps = 0;
for await (const [input, target] of new DataLoader(opts, [inputs, targets], { batchSize: 1 })) {
  const [output, loss] = await executor(input!, target!);
  steps++;
  tf.dispose([input!, target!, output as tf.Tensor, loss]);
}
if (dir !== undefined) {
  executor.saveCheckpoint(`${dir}/checkpoint-${rank}`);
  await executor.compileAndExport(
    `${dir}/export-${rank}`,
    x.slice([0], [(totalReplicas / instances) * accumulation]),
    y.slice([0], [(totalReplicas / instances) * accumulation]),
  );
}
const weights = model.getWeights().map((w) => [...(w.dataSync() as Float32Array)]);
// An instance's summary report ends with the gradient all-reduce across the instances.
const allReduce = world ? executor.getSummaryReport().split('\n\n').pop() : undefined;
console.log(JSON.stringify({ rank, steps, weights, allReduce }));
