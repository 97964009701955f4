/**
 * Re-connecting exported models (PopTorch's last precompilation example):
 * load the training model, create the validation wrapper from it with
 * `inferenceModel(trainingModel)` and load the validation executable into
 * that wrapper. The two wrap the same model again, so poptfjs keeps their
 * weights in sync implicitly: no copies are needed.
 *
 * Run: npx tsx examples/precompile-reconnected-pair.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inferenceModel, load, Options, tf, trainingModel } from 'poptfjs';

const dir = mkdtempSync(join(tmpdir(), 'poptfjs-'));
const trainingFile = join(dir, 'training.poptfjs');
const validationFile = join(dir, 'validation.poptfjs');

const input = tf.randomNormal([1, 10], 0, 1, 'float32', 1);
const target = tf.randomNormal([1, 10], 0, 1, 'float32', 2);

// Export a training and a validation model of the same tfjs model.
{
  const model = tf.sequential({ layers: [tf.layers.dense({ units: 10, inputShape: [10], kernelInitializer: tf.initializers.glorotUniform({ seed: 0 }) })] });
  const opts = new Options();
  const trainingExport = trainingModel(model, { options: opts, loss: 'meanSquaredError' });
  await trainingExport.compileAndExport(trainingFile, input, target);
  const validationExport = inferenceModel(model, { options: opts.clone() });
  await validationExport.compileAndExport(validationFile, input);
  trainingExport.destroy();
  validationExport.destroy();
}

const trainingModelLoaded = await load(trainingFile);
// Create a validation wrapper based on the training model, and load the executable for it.
const validationModel = inferenceModel(trainingModelLoaded);
await validationModel.loadExecutable(validationFile);

for (let epoch = 0; epoch < 3; epoch++) {
  for (let step = 0; step < 20; step++) tf.dispose(await trainingModelLoaded(input, target));
  // Nothing to do: the two models are connected and poptfjs keeps their weights in sync.
  const prediction = (await validationModel(input)) as tf.Tensor;
  const [trainingOutput, trainingLoss] = (await trainingModelLoaded(input, target)) as [tf.Tensor, tf.Tensor];
  const difference = tf.max(tf.abs(tf.sub(prediction, trainingOutput))).dataSync()[0]!;
  console.log(
    `epoch ${epoch}: validation loss ${tf.losses.meanSquaredError(target, prediction).dataSync()[0]!.toFixed(6)}, ` +
      `training loss ${trainingLoss.dataSync()[0]!.toFixed(6)}; validation ${difference < 1e-5 ? 'sees' : 'does NOT see'} the trained weights`,
  );
}
rmSync(dir, { recursive: true, force: true });
