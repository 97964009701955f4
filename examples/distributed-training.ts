/**
 * Data-parallel training over several instances, as PopRun and PopDist run
 * it: every instance trains the same model on its own consecutive block of
 * the dataset (the DataLoader splits it by the instance's index, as
 * PopTorch's does), their gradients are summed over the instances with MPI
 * after each step, and every instance ends with the weights one process with
 * all the replicas would have on the same global batches (each instance's
 * next batch). `popdist.Options()` sets the replicas of this instance and its
 * place in the run.
 *
 * Run:
 *   npx poptfjs run --num-instances 2 --num-replicas 2 -- npx tsx examples/distributed-training.ts
 *   npx tsx examples/distributed-training.ts          (alone: 1 instance of 1 replica)
 *   npx tsx examples/distributed-training.ts --as-instances 2   (alone, reading the samples in the order
 *                                                                2 instances read them together)
 *
 * Each instance prints its final weights' checksum (`--print-weights` also
 * prints them as JSON); instance 0 prints the loss of each epoch and the
 * gradient all-reduce of the summary report.
 */
import { DataLoader, optim, popdist, tf, trainingModel } from 'poptfjs';

const printWeights = process.argv.includes('--print-weights');
const instance = popdist.getInstanceIndex();
const opts = popdist.Options().randomSeed(5);

// The same weights on every instance (instance 0's are broadcast at the first step in any case).
const model = tf.sequential({
  layers: [
    tf.layers.dense({ units: 16, inputShape: [8], activation: 'tanh', kernelInitializer: tf.initializers.glorotUniform({ seed: 1 }) }),
    tf.layers.dense({ units: 1, kernelInitializer: tf.initializers.glorotUniform({ seed: 2 }) }),
  ],
});
const executor = trainingModel(model, { options: opts, loss: 'meanSquaredError', optimizer: new optim.SGD(model, { lr: 0.02, momentum: 0.5 }) });

// 96 samples of a smooth function of 8 inputs; every instance holds them all and trains on its share.
const samples = 96;
const x = tf.tensor2d(
  Array.from({ length: samples * 8 }, (_, i) => Math.sin(0.37 * i)),
  [samples, 8],
);
const y = tf.tensor2d(
  Array.from({ length: samples }, (_, i) => Math.cos(0.91 * i) * 0.5),
  [samples, 1],
);
// `--as-instances N`: one process reads the global batches N instances read together, each instance its
// consecutive block: batch k of instance 0, then batch k of instance 1, and so on.
const asInstances = process.argv.includes('--as-instances') ? Number(process.argv[process.argv.indexOf('--as-instances') + 1]) : 1;
const instanceBatch = (4 * popdist.getNumTotalReplicas()) / asInstances;
const block = instanceBatch * Math.floor(samples / (instanceBatch * asInstances));
const order: number[] = [];
for (let start = 0; start < block; start += instanceBatch) for (let p = 0; p < asInstances; p++) for (let i = 0; i < instanceBatch; i++) order.push(p * block + start + i);
const [inputs, targets] = tf.tidy(() => [tf.gather(x, order), tf.gather(y, order)]);
const loader = new DataLoader(opts, [inputs!, targets!], { batchSize: 4 });

for (let epoch = 0; epoch < 2; epoch++) {
  let lossSum = 0;
  let steps = 0;
  for await (const [input, target] of loader) {
    const [output, loss] = await executor(input!, target!);
    lossSum += loss.dataSync()[0]!;
    steps++;
    tf.dispose([input!, target!, output as tf.Tensor, loss]);
  }
  if (instance === 0)
    console.log(`epoch ${epoch}: ${steps} steps of ${loader.combinedBatchSize} samples per instance, mean loss on its share ${(lossSum / steps).toFixed(6)}`);
}

if (instance === 0 && popdist.getNumInstances() > 1) console.log(executor.getSummaryReport().split('\n\n').pop());
const weights = model.getWeights().map((w) => [...(w.dataSync() as Float32Array)]);
const checksum = weights.flat().reduce((sum, w) => sum + w, 0);
console.log(`instance ${instance} of ${popdist.getNumInstances()} (${popdist.getNumTotalReplicas()} replicas in all): final weights checksum ${checksum.toFixed(6)}`);
if (printWeights) console.log(JSON.stringify({ instance, weights }));
