/**
 * `setOptimizer` with a tfjs optimizer, as PopTorch's `setOptimizer` takes a
 * torch optimizer (tests/optimizers_test.py, test_optimizer over
 * supported_torch_optimizers): with a learning rate of 0 the loss does not
 * move; a new optimizer with another learning rate then trains on from the
 * state the device holds, as tfjs's own optimizer does when its learning
 * rate changes.
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { inferenceModel, trainingModel } from 'poptfjs';
import { expectClose } from '../helpers.js';

function regressor(): tf.Sequential {
  return tf.sequential({
    layers: [
      tf.layers.dense({ units: 6, inputShape: [5], activation: 'tanh', kernelInitializer: tf.initializers.glorotUniform({ seed: 41 }) }),
      tf.layers.dense({ units: 3, kernelInitializer: tf.initializers.glorotUniform({ seed: 42 }) }),
    ],
  });
}

const x = tf.randomNormal([4, 5], 0, 1, 'float32', 43);
const y = tf.randomNormal([4, 3], 0, 1, 'float32', 44);

describe('setOptimizer with a tfjs optimizer', () => {
  it('trains as the tfjs optimizer would: nothing moves at lr 0, then the new learning rate applies from the state kept', async () => {
    const model = regressor();
    const executor = trainingModel(model, { loss: 'meanSquaredError', optimizer: tf.train.adam(0) });
    const reference = regressor();
    const theirs = tf.train.adam(0);
    reference.compile({ optimizer: theirs, loss: 'meanSquaredError' });
    const [, first] = await executor.run(x, y);
    const original = first.dataSync()[0]!;
    for (let step = 0; step < 3; step++) {
      const [, loss] = await executor.run(x, y);
      expect(loss.dataSync()[0]).toBe(original);
    }
    for (let step = 0; step < 4; step++) await reference.trainOnBatch(x, y);
    executor.setOptimizer(tf.train.adam(0.05));
    expect(executor.getOptimizer()?.type).toBe('Adam');
    (theirs as unknown as { learningRate: number }).learningRate = 0.05;
    let last = original;
    for (let step = 0; step < 6; step++) {
      const [, loss] = await executor.run(x, y);
      const expected = (await reference.trainOnBatch(x, y)) as number;
      last = loss.dataSync()[0]!;
      expect(Math.abs(last - expected)).toBeLessThan(1e-5);
    }
    expect(last).toBeLessThan(original);
    executor.copyWeightsToHost();
    model.getWeights().forEach((w, i) => expectClose(w, reference.getWeights()[i]!, 0, 1e-5));
    executor.destroy();
  });

  it('refuses another type after compiling, a tfjs optimizer poptfjs cannot take, one for a function model not yet compiled, and any for inference', async () => {
    const executor = trainingModel(regressor(), { loss: 'meanSquaredError', optimizer: tf.train.adam(0.01) });
    await executor.compile(x, y);
    expect(() => executor.setOptimizer(tf.train.sgd(0.1))).toThrow(
      'setOptimizer: the model was compiled with an optim.Adam; it cannot switch to an optim.SGD without recompiling',
    );
    expect(() => executor.setOptimizer(tf.train.adagrad(0.1))).toThrow('setOptimizer: the tfjs Adagrad optimizer has no poptfjs equivalent');
    executor.destroy();
    const w = tf.variable(tf.ones([5, 3]), true);
    const fn = trainingModel((input: tf.Tensor) => tf.matMul(input, w), { loss: 'meanSquaredError' });
    expect(() => fn.setOptimizer(tf.train.sgd(0.1))).toThrow(
      "setOptimizer: a tfjs optimizer trains the variables of the model's optimizer, which a function model has once it is compiled",
    );
    fn.destroy();
    const inference = inferenceModel(regressor());
    expect(() => inference.setOptimizer(tf.train.sgd(0.1))).toThrow('setOptimizer: an inference model has no optimizer');
  });
});
