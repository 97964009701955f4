/**
 * What pipelining buys: a model of four equal blocks, trained on one IPU and
 * pipelined over two and four IPUs, with more or fewer micro-batches per
 * weight update. For each, the simulated timeline's throughput, its pipeline
 * bubble (the idle share, (S-1)/(M+S-1) for S balanced stages over M
 * micro-batches) and the IPUs' utilization.
 *
 * Run: npx tsx examples/pipeline-timeline.ts [report-directory]
 * With a directory, the HTML report of the 4-IPU pipeline is written there.
 */
import { BeginBlock, Options, PipelinedExecution, Stage, optim, tf, trainingModel } from 'poptfjs';

const width = 1024;
const microBatch = 16;

function model(): tf.Sequential {
  const m = tf.sequential({
    layers: Array.from({ length: 4 }, (_, i) =>
      tf.layers.dense({ units: width, inputShape: [width], activation: 'relu', kernelInitializer: tf.initializers.randomNormal({ stddev: 0.02, seed: i }) }),
    ),
  });
  m.layers.forEach((layer, i) => BeginBlock(layer, { userId: `block${i}` }));
  return m;
}

function strategy(ipus: number) {
  const blocksPerIpu = 4 / ipus;
  return PipelinedExecution(...Array.from({ length: ipus }, (_, ipu) => Stage(...Array.from({ length: blocksPerIpu }, (__, k) => `block${ipu * blocksPerIpu + k}`)).ipu(ipu)));
}

const reportDir = process.argv[2];
console.log('IPUs  grad. accumulation  samples/s     bubble   utilization per IPU');
for (const [ipus, accumulation] of [
  [1, 8],
  [2, 8],
  [2, 32],
  [4, 8],
  [4, 32],
] as const) {
  const m = model();
  const opts = new Options().setExecutionStrategy(strategy(ipus));
  opts.Training.gradientAccumulation(accumulation);
  if (reportDir && ipus === 4 && accumulation === 8) opts.enableProfiling(reportDir);
  const executor = trainingModel(m, { options: opts, loss: 'meanSquaredError', optimizer: new optim.SGD(m, { lr: 0.01 }) });
  const batch = microBatch * accumulation;
  await executor.compile(tf.ones([batch, width]), tf.ones([batch, width]));
  const { timeline } = executor.executable.hardware;
  const utilization = timeline.ipus.map((a) => `${(100 * a.utilization).toFixed(1)}%`).join(' ');
  console.log(
    `${String(ipus).padEnd(5)} ${String(accumulation).padEnd(19)} ${timeline.throughput.toFixed(0).padStart(9)}     ${(100 * timeline.bubbleFraction).toFixed(1).padStart(5)}%   ${utilization}`,
  );
  executor.destroy();
  m.dispose();
}
