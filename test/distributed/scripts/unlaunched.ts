/**
 * Run without mpiexec: a process that says it is process 1 of 2 prints, as
 * one JSON line, the error its first step gives.
 */
import * as tf from '@tensorflow/tfjs';
import { initBackend } from '../../../lib/backend/backend_selection.js';
import { trainingModel } from '../../../lib/executor/model_wrappers.js';
import { Options } from '../../../lib/options/options.js';

await initBackend();
const opts = new Options();
opts.Distributed.configureProcessId(1, 2);
const model = tf.sequential({ layers: [tf.layers.dense({ units: 1, inputShape: [2] })] });
const executor = trainingModel(model, { options: opts, loss: 'meanSquaredError' });
try {
  await executor(tf.ones([1, 2]), tf.ones([1, 1]));
  console.log(JSON.stringify({ rank: 0, error: null }));
} catch (error) {
  console.log(JSON.stringify({ rank: 0, error: (error as Error).message }));
}
