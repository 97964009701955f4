/**
 * Simulated IPUs on worker threads (`opts.parallelIpus(true)`): a model
 * pipelined over two IPUs trains with each IPU in a thread of its own, so the
 * two pipeline stages compute at the same time on two cores. The losses are
 * the same, bit for bit, as with the IPUs run one after another in-process;
 * the summary report then shows the overlap measured on the host next to the
 * simulated utilization.
 *
 * Run: npx tsx examples/parallel-ipus.ts
 */
import { BeginBlock, Options, optim, tf, trainingModel } from 'poptfjs';

const WIDTH = 256;
const STEPS = 4;

/** Two dense layers, one per IPU (the same weights every time). */
function model(): tf.Sequential {
  const init = (seed: number) => tf.initializers.glorotUniform({ seed });
  const first = tf.layers.dense({ units: WIDTH, inputShape: [WIDTH], activation: 'relu', kernelInitializer: init(1) });
  const second = tf.layers.dense({ units: 10, kernelInitializer: init(2) });
  BeginBlock(first, { userId: 'encoder', ipuId: 0 });
  BeginBlock(second, { userId: 'head', ipuId: 1 });
  return tf.sequential({ layers: [first, second] });
}

/** Trains a fresh model for {@link STEPS} steps; returns the losses and the executor. */
async function train(parallelIpus: boolean) {
  const net = model();
  const opts = new Options().parallelIpus(parallelIpus);
  opts.Training.gradientAccumulation(8); // 8 micro-batches per step keep the pipeline's bubble small
  const executor = trainingModel(net, { options: opts, loss: 'meanSquaredError', optimizer: new optim.SGD(net, { lr: 0.01 }) });
  const x = tf.randomNormal([8 * 32, WIDTH], 0, 1, 'float32', 1);
  const y = tf.randomNormal([8 * 32, 10], 0, 1, 'float32', 2);
  const losses: number[] = [];
  for (let step = 0; step < STEPS; step++) {
    const [, loss] = await executor(x, y);
    losses.push(loss.dataSync()[0]!);
  }
  return { losses, executor };
}

const inProcess = await train(false);
const onWorkers = await train(true);
for (let step = 0; step < STEPS; step++) {
  console.log(`step ${step}: loss ${onWorkers.losses[step]!.toFixed(6)} on worker IPUs, ${inProcess.losses[step]!.toFixed(6)} in-process`);
}
console.log(`identical losses: ${onWorkers.losses.every((loss, i) => loss === inProcess.losses[i])}`);
console.log(onWorkers.executor.planText().split('\n')[0]);
// The last section of the summary report: what was measured on the host over the last call.
console.log(onWorkers.executor.getSummaryReport().split('\n\n').at(-1));
onWorkers.executor.destroy();
inProcess.executor.destroy();
