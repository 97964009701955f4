/**
 * What the engine tests run: a small regressor trained with SGD, exported
 * with its model, and a hand-written tfjs SGD step to check the engine's
 * numbers against.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { Options, optim, trainingModel } from 'poptfjs';
import { variableOf } from '../helpers.js';

/** A 5 → 6 (tanh) → 3 regressor whose weights are seeded. */
export function regressor(seed: number): tf.Sequential {
  return tf.sequential({
    layers: [
      tf.layers.dense({ units: 6, inputShape: [5], activation: 'tanh', kernelInitializer: tf.initializers.glorotUniform({ seed }) }),
      tf.layers.dense({ units: 3, kernelInitializer: tf.initializers.glorotUniform({ seed: seed + 1 }) }),
    ],
  });
}

/** One hand-written tfjs SGD step on `model` with MSE over the whole batch; returns the loss before the step. */
export function handWrittenStep(model: tf.LayersModel, x: tf.Tensor, y: tf.Tensor, lr: number): number {
  const vars = model.trainableWeights.map(variableOf);
  return tf.tidy(() => {
    const { value, grads } = tf.variableGrads(() => tf.mean(tf.square(tf.sub(model.apply(x) as tf.Tensor, y))) as tf.Scalar, vars);
    for (const v of vars) v.assign(tf.sub(v, tf.mul(grads[v.name]!, lr)));
    return value.dataSync()[0]!;
  });
}

/**
 * Exports the training executable of `regressor(seed)` (SGD, lr 0.1) for host
 * batches of `batch`, with its model, and returns the file and the model's
 * kernel names in the order of its weights.
 */
export async function exportedRegressor(seed: number, batch: number, options = new Options()): Promise<{ path: string; weightNames: string[] }> {
  const model = regressor(seed);
  const executor = trainingModel(model, { options, loss: 'meanSquaredError', optimizer: new optim.SGD(model, { lr: 0.1 }) });
  const path = join(mkdtempSync(join(tmpdir(), 'poptfjs-engine-')), 'regressor.poptfjs');
  await executor.compileAndExport(path, tf.zeros([batch, 5]), tf.zeros([batch, 3]));
  const weightNames = model.weights.map((w) => w.name);
  executor.destroy();
  // The engine's weights take the parameters' names, which the model's variables hold until it is disposed.
  model.dispose();
  return { path, weightNames };
}
