/**
 * Run under `mpiexec -n 2`: each instance wraps a weight split across
 * replica groups and prints, as one JSON line, the error its first step gives.
 */
import * as tf from '@tensorflow/tfjs';
import { initBackend } from '../../../lib/backend/backend_selection.js';
import { trainingModel } from '../../../lib/executor/model_wrappers.js';
import { identityLoss } from '../../../ops/identity_loss.js';
import { CommGroupType } from '../../../lib/option_vocabulary/enums.js';
import { Options } from '../../../lib/options/options.js';
import { SGD } from '../../../optim/sgd.js';

await initBackend();
const rank = Number(process.env.PMI_RANK ?? process.env.OMPI_COMM_WORLD_RANK);
const W = tf.variable(tf.zeros([2, 1]), true, 'grouped_w');
const model = (x: tf.Tensor) => identityLoss(tf.sum(tf.mul(x, W)), 'sum');
const executor = trainingModel(model, { options: new Options().replicationFactor(2), optimizer: new SGD([W], { lr: 0.1 }) });
executor.parameter('grouped_w').replicaGrouping(CommGroupType.Orthogonal, 1);
try {
  await executor(tf.tensor2d([1, 2], [2, 1]));
  console.log(JSON.stringify({ rank, error: null }));
} catch (error) {
  console.log(JSON.stringify({ rank, error: (error as Error).message }));
}
