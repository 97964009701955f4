/**
 * Compiles and runs one training step of a fixed model with the executable
 * cache of `POPTFJS_CACHE_DIR`, then prints the cache statistics and the
 * loss as JSON: the cache tests run it in several processes.
 *
 * Run: POPTFJS_CACHE_DIR=<dir> node --import tsx test/files/programs/cached_compile.ts
 */
import { executableCacheStatistics, Options, tf, trainingModel } from 'poptfjs';

const model = tf.sequential({
  layers: [
    tf.layers.dense({ units: 16, inputShape: [8], activation: 'relu', kernelInitializer: tf.initializers.glorotUniform({ seed: 1 }) }),
    tf.layers.dense({ units: 4, kernelInitializer: tf.initializers.glorotUniform({ seed: 2 }) }),
  ],
});
const executor = trainingModel(model, { options: new Options().useIpuModel(true), loss: 'meanSquaredError' });
const [output, loss] = (await executor(tf.randomNormal([2, 8], 0, 1, 'float32', 3), tf.randomNormal([2, 4], 0, 1, 'float32', 4))) as [tf.Tensor, tf.Tensor];
console.log(JSON.stringify({ ...executableCacheStatistics(), loss: loss.dataSync()[0], outputs: Array.from(output.dataSync()) }));
executor.destroy();
