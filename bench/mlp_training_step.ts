/**
 * The training step of an MLP 784-512-512-10 (batch 64, SGD lr 0.01), through
 * plain tfjs (`optimizer.minimize`) and through poptfjs, on the same backend.
 */
import { currentBackend, optim, tf, trainingModel } from 'poptfjs';
import type { BenchCase } from './side_by_side.js';

const BATCH = 64;

function mlp(seed: number): tf.Sequential {
  const init = (s: number) => tf.initializers.glorotUniform({ seed: seed + s });
  return tf.sequential({
    layers: [
      tf.layers.dense({ units: 512, inputShape: [784], activation: 'relu', kernelInitializer: init(1) }),
      tf.layers.dense({ units: 512, activation: 'relu', kernelInitializer: init(2) }),
      tf.layers.dense({ units: 10, activation: 'softmax', kernelInitializer: init(3) }),
    ],
  });
}

/** The two cases of the MLP benchmark, plain tfjs first. */
export function mlpTrainingCases(): BenchCase[] {
  const x = tf.randomNormal([BATCH, 784], 0, 1, 'float32', 11);
  const y = tf.oneHot(tf.randomUniform([BATCH], 0, 10, 'int32', 12), 10).toFloat();

  const plainModel = mlp(0);
  const plainOptimizer = tf.train.sgd(0.01);
  const plain: BenchCase = {
    name: `tfjs ${currentBackend()} (optimizer.minimize)`,
    step() {
      const loss = plainOptimizer.minimize(
        () => tf.mean(tf.metrics.categoricalCrossentropy(y, plainModel.apply(x, { training: true }) as tf.Tensor)) as tf.Scalar,
        true,
      )!;
      loss.dataSync();
      loss.dispose();
    },
  };

  const poptfjsModel = mlp(0);
  const executor = trainingModel(poptfjsModel, {
    loss: 'categoricalCrossentropy',
    optimizer: new optim.SGD(poptfjsModel, { lr: 0.01 }),
  });
  const poptfjs: BenchCase = {
    name: 'poptfjs trainingModel',
    async step() {
      const [out, loss] = await executor(x, y);
      loss.dataSync();
      tf.dispose([out as tf.Tensor, loss]);
    },
  };
  return [plain, poptfjs];
}
