/**
 * A training process that saves a checkpoint after every step, forever, to
 * `<dir>/state.ckpt`: the crash test kills it at random moments and checks
 * the checkpoint it leaves. Prints `ready` once the first checkpoint exists.
 *
 * Run: node --import tsx test/files/programs/checkpoint_writer.ts <dir>
 */
import { join } from 'node:path';
import { Options, optim, tf, trainingModel } from 'poptfjs';

const dir = process.argv[2]!;
const model = tf.sequential({
  layers: [
    tf.layers.dense({ units: 128, inputShape: [128], activation: 'relu', kernelInitializer: tf.initializers.glorotUniform({ seed: 1 }) }),
    tf.layers.dense({ units: 128, kernelInitializer: tf.initializers.glorotUniform({ seed: 2 }) }),
  ],
});
const executor = trainingModel(model, {
  options: new Options().randomSeed(7).useIpuModel(true),
  loss: 'meanSquaredError',
  optimizer: new optim.SGD(model, { lr: 0.001, momentum: 0.9 }),
});
const x = tf.randomNormal([2, 128], 0, 1, 'float32', 3);
const y = tf.randomNormal([2, 128], 0, 1, 'float32', 4);
const path = join(dir, 'state.ckpt');
tf.dispose(await executor(x, y));
executor.saveCheckpoint(path);
process.stdout.write('ready\n');
for (;;) {
  tf.dispose(await executor(x, y));
  executor.saveCheckpoint(path);
}
