/**
 * Will it fit? A 4-layer MLP of 4096 × 4096 weights trained with Adam
 * and gradient accumulation, on one, two and four simulated Mk2 IPUs: the
 * memory table of each placement (weights, optimizer state, activations at
 * the schedule's peak, temporary memory, code), and whether it fits.
 *
 * Run: npx tsx examples/will-it-fit.ts [report-directory]
 * With a directory, the HTML report of the 4-IPU placement is written there.
 */
import { BeginBlock, Options, OutOfMemoryError, optim, tf, trainingModel } from 'poptfjs';

const width = 4096;
const microBatch = 8;
const accumulation = 8;

function mlp(): tf.Sequential {
  return tf.sequential({
    layers: Array.from({ length: 4 }, (_, i) =>
      tf.layers.dense({
        units: width,
        inputShape: [width],
        activation: 'relu',
        kernelInitializer: tf.initializers.randomNormal({ stddev: 0.01, seed: i }),
        name: `dense${i}`,
      }),
    ),
  });
}

const x = tf.randomNormal([microBatch * accumulation, width], 0, 1, 'float32', 1);
const y = tf.randomNormal([microBatch * accumulation, width], 0, 1, 'float32', 2);

for (const ipus of [1, 2, 4]) {
  const model = mlp();
  // Layer i goes on IPU floor(i × ipus / 4): one IPU holds everything, two IPUs two layers each, four one each.
  model.layers.forEach((layer, i) => BeginBlock(layer, { ipuId: Math.floor((i * ipus) / 4) }));
  const opts = new Options().allowOutOfMemory(true);
  if (process.argv[2] && ipus === 4) opts.enableProfiling(process.argv[2]);
  opts.Training.gradientAccumulation(accumulation);
  const executor = trainingModel(model, { options: opts, loss: 'meanSquaredError', optimizer: new optim.Adam(model, { lr: 1e-4 }) });
  await executor.compile(x, y);
  const report = executor.getSummaryReport();
  const table = report.slice(report.indexOf('Memory per IPU'), report.indexOf('\n\n', report.indexOf('Memory per IPU')));
  const { memory } = executor.executable.hardware;
  console.log(`\n=== ${ipus} IPU(s): ${memory.fits ? 'fits' : 'does NOT fit'} ===\n${table}`);
  if (!memory.fits) console.log(`\n${new OutOfMemoryError(memory, microBatch, model.name).message}`);
  executor.destroy();
  model.dispose();
}
