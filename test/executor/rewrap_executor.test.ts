import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { Options, PoplarExecutor, inferenceModel, optim, trainingModel } from 'poptfjs';
import { expectClose } from '../helpers.js';

// PopTorch's trainingModel and inferenceModel accept a PoplarExecutor and wrap its model.
describe('wrapping an executor', () => {
  it("trains the model of an inference executor, which sees the trained weights; the options are a copy of the executor's", async () => {
    const w = tf.variable(tf.ones([1, 1]), true, 'rewrap_w');
    const inference = inferenceModel((x: tf.Tensor) => tf.matMul(x, w), { options: new Options().deviceIterations(2) });
    const training = trainingModel(inference, { loss: 'meanSquaredError', optimizer: new optim.SGD([w], { lr: 0.1 }) });
    expect(training).toBeInstanceOf(PoplarExecutor);
    expect(training.model).toBe(inference.model);
    expect(training.options).not.toBe(inference.options);
    expect(training.options.settings.deviceIterations).toBe(2);

    // Two steps of SGD on (2w - 0)²: w = 1 - 0.1 · 8 = 0.2, then 0.2 - 0.1 · 1.6 = 0.04.
    const x = tf.tensor2d([[2], [2]]);
    await training(x, tf.zeros([2, 1]));
    expectClose((await inference(x)) as tf.Tensor, tf.tensor2d([[0.08], [0.08]]));
    training.destroy();
  });

  it('allows one live training executor per model, as PopTorch does, and wraps a destroyed one again', async () => {
    const w = tf.variable(tf.ones([1, 1]), true, 'rewrap_twice_w');
    const first = trainingModel((x: tf.Tensor) => tf.matMul(x, w), { loss: 'meanSquaredError' });
    expect(() => trainingModel(first, { loss: 'meanSquaredError' })).toThrow(
      /^model '.*' is already wrapped by a live trainingModel executor; call destroy\(\) on that executor before wrapping the model for training again$/,
    );
    first.destroy();
    const second = trainingModel(first, { loss: 'meanSquaredError', optimizer: new optim.SGD([w], { lr: 0.1 }) });
    const [output] = await second(tf.tensor2d([[3]]), tf.tensor2d([[3]]));
    expectClose(output as tf.Tensor, tf.tensor2d([[3]]));
    second.destroy();
  });

  it('refuses what is neither a model nor an executor', () => {
    expect(() => trainingModel(42 as never)).toThrow('trainingModel: expected a tf.LayersModel or a function of tensors, got number');
  });
});
