/**
 * Exported models lose their connection (PopTorch's training/validation
 * export example). A training and an inference wrapper of the same model
 * share its weights: validation sees what training learnt. Exported
 * separately and loaded back, they no longer do: the weights must be copied
 * explicitly, from the training device to the host (`copyWeightsToHost`)
 * and from the host to the validation device (`copyWeightsToDevice`).
 *
 * Run: npx tsx examples/precompile-exported-pair.ts
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
const validationModel = await load(validationFile);

async function validationLoss(): Promise<number> {
  const prediction = (await validationModel(input)) as tf.Tensor;
  return tf.losses.meanSquaredError(target, prediction).dataSync()[0]!;
}

const before = await validationLoss();
for (let epoch = 0; epoch < 3; epoch++) {
  for (let step = 0; step < 20; step++) tf.dispose(await trainingModelLoaded(input, target));
  const stale = await validationLoss();
  // Need to explicitly copy weights between the two models because they're not connected anymore.
  trainingModelLoaded.copyWeightsToHost();
  validationModel.copyWeightsToDevice();
  const copied = await validationLoss();
  console.log(`epoch ${epoch}: validation loss ${stale.toFixed(6)} before the copy, ${copied.toFixed(6)} after it`);
}
console.log(`validation loss went from ${before.toFixed(6)} to ${(await validationLoss()).toFixed(6)}`);
rmSync(dir, { recursive: true, force: true });
