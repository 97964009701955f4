/**
 * Every instance of a `poptfjs run` compiles the same training model at the
 * same moment (after a barrier), with the executable cache in
 * `POPTFJS_CACHE_DIR`, and prints what the cache did as one JSON line.
 */
import * as tf from '@tensorflow/tfjs';
import { initBackend } from '../../../lib/backend/backend_selection.js';
import { instanceBarrier } from '../../../lib/distributed/instance_barrier.js';
import * as popdist from '../../../lib/distributed/popdist.js';
import { executableCacheStatistics } from '../../../lib/files/executable_cache.js';
import { trainingModel } from '../../../lib/executor/model_wrappers.js';

await initBackend();
const model = tf.sequential({
  layers: [
    tf.layers.dense({ units: 32, inputShape: [16], activation: 'relu', kernelInitializer: tf.initializers.glorotUniform({ seed: 1 }) }),
    tf.layers.dense({ units: 4, kernelInitializer: tf.initializers.glorotUniform({ seed: 2 }) }),
  ],
});
const executor = trainingModel(model, { options: popdist.Options(), loss: 'meanSquaredError' });
await instanceBarrier();
await executor.compile(tf.zeros([2, 16]), tf.zeros([2, 4]));
console.log(JSON.stringify({ instance: popdist.getInstanceIndex(), statistics: executableCacheStatistics() }));
