/**
 * `copyWeightsToDevice()` writes the host model's weights as they are, even
 * right after training: the device's trained weights are not copied back
 * over them first. Written from PopTorch's tests/weights_writing_test.py
 * (test_weight_overwrite_trained_weight).
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { optim, trainingModel } from 'poptfjs';
import { expectClose, variableOf } from '../helpers.js';

describe('copyWeightsToDevice', () => {
  it('overwrites the trained weights with the host weights, which the step had not copied back', async () => {
    const model = tf.sequential({ layers: [tf.layers.dense({ units: 4, inputShape: [4], kernelInitializer: tf.initializers.glorotUniform({ seed: 5 }) })] });
    const initial = model.getWeights().map((w) => w.clone());
    const kernel = variableOf(model.layers[0]!.weights[0]!);
    const x = tf.randomNormal([4, 4], 0, 1, 'float32', 6);
    const target = tf.randomNormal([4, 4], 0, 1, 'float32', 7);
    const executor = trainingModel(model, { loss: 'meanSquaredError', optimizer: new optim.SGD(model, { lr: 0.2 }) });
    const [, first] = (await executor.run(x, target)) as [tf.Tensor, tf.Tensor];
    let trained = first;
    for (let step = 0; step < 30; step++) [, trained] = (await executor.run(x, target)) as [tf.Tensor, tf.Tensor];
    expect(trained.dataSync()[0]).toBeLessThan(first.dataSync()[0]!);

    // Overwrite the trained weights with the host's (the initial ones: nothing copied them back), and stop training.
    executor.copyWeightsToDevice();
    executor.setOptimizer(new optim.SGD(model, { lr: 0 }));
    const [out, loss] = (await executor.run(x, target)) as [tf.Tensor, tf.Tensor];
    expectClose(loss, first, 1e-6, 1e-6);
    expectClose(out, tf.add(tf.matMul(x, initial[0]!), initial[1]!), 1e-5, 1e-6);
    expectClose(kernel, initial[0]!);
    executor.destroy();
  });
});
