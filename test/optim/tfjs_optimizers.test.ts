import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { optim, plan, trainingModel } from 'poptfjs';
import { expectClose } from '../helpers.js';

function regressor(seed: number): tf.Sequential {
  return tf.sequential({
    layers: [
      tf.layers.dense({ units: 6, inputShape: [5], activation: 'tanh', kernelInitializer: tf.initializers.glorotUniform({ seed }) }),
      tf.layers.dense({ units: 3, kernelInitializer: tf.initializers.glorotUniform({ seed: seed + 1 }) }),
    ],
  });
}

const STEPS = 12;

/** Each tfjs optimizer poptfjs takes, made fresh for each of the two runs compared. */
const MAPPED: Array<[string, () => tf.Optimizer, string]> = [
  ['sgd', () => tf.train.sgd(0.1), 'SGD'],
  ['momentum', () => tf.train.momentum(0.05, 0.9), 'SGD'],
  ['momentum with Nesterov', () => tf.train.momentum(0.05, 0.8, true), 'SGD'],
  ['adam', () => tf.train.adam(0.01, 0.85, 0.99), 'Adam'],
  ['adam with its default epsilon', () => tf.train.adam(), 'Adam'],
  ['rmsprop', () => tf.train.rmsprop(0.01, 0.9), 'RMSprop'],
  ['rmsprop with momentum', () => tf.train.rmsprop(0.005, 0.8, 0.7, 1e-6), 'RMSprop'],
];

describe('tfjs optimizers', () => {
  it.each(MAPPED)('the optimizer a layers model was compiled with (%s) takes the steps model.trainOnBatch takes', async (_name, make, type) => {
    const x = tf.randomNormal([4, 5], 0, 1, 'float32', 7);
    const y = tf.randomNormal([4, 3], 0, 1, 'float32', 8);
    const model = regressor(11);
    model.compile({ optimizer: make(), loss: 'meanSquaredError' });
    const reference = regressor(11);
    reference.compile({ optimizer: make(), loss: 'meanSquaredError' });
    const executor = trainingModel(model);
    for (let step = 0; step < STEPS; step++) {
      const [, loss] = await executor.run(x, y);
      const expected = (await reference.trainOnBatch(x, y)) as number;
      expect(Math.abs(loss.dataSync()[0]! - expected)).toBeLessThan(1e-5);
    }
    expect(executor.getOptimizer()?.type).toBe(type);
    executor.copyWeightsToHost();
    model.getWeights().forEach((w, i) => expectClose(w, reference.getWeights()[i]!, 0, 1e-5));
    executor.destroy();
  });

  it.each(MAPPED)('tf.train.%s given to trainingModel for a function model takes the steps optimizer.minimize takes', async (name, make) => {
    const x = tf.randomNormal([6, 4], 0, 1, 'float32', 21);
    const y = tf.randomNormal([6, 2], 0, 1, 'float32', 22);
    const start = [tf.randomNormal([4, 3], 0, 0.5, 'float32', 23), tf.randomNormal([3, 2], 0, 0.5, 'float32', 24)];
    const weights = (tag: string) => start.map((t, i) => tf.variable(t.clone(), true, `tfjs_${name.replace(/ /g, '_')}_${tag}_${i}`));
    const forward = ([w1, w2]: tf.Variable[], input: tf.Tensor) => tf.matMul(tf.relu(tf.matMul(input, w1!)), w2!);
    const mine = weights('poptfjs');
    const theirs = weights('tfjs');
    const executor = trainingModel((input: tf.Tensor) => forward(mine, input), { optimizer: make(), loss: 'meanSquaredError' });
    const optimizer = make();
    for (let step = 0; step < STEPS; step++) {
      await executor.run(x, y);
      optimizer.minimize(() => tf.losses.meanSquaredError(y, forward(theirs, x)) as tf.Scalar, false, theirs);
    }
    executor.copyWeightsToHost();
    mine.forEach((w, i) => expectClose(w, theirs[i]!, 0, 1e-5));
    executor.destroy();
  });

  it.each([
    [
      'adagrad',
      () => tf.train.adagrad(0.1),
      'trainingModel: the tfjs Adagrad optimizer has no poptfjs equivalent (poptfjs has SGD, momentum, Adam and RMSprop from tfjs); pass a poptfjs optimizer instead, e.g. new optim.Adam(model, { lr: 1e-3 }) or new optim.RMSprop(model, { lr: 1e-3 })',
    ],
    [
      'adadelta',
      () => tf.train.adadelta(),
      'trainingModel: the tfjs Adadelta optimizer has no poptfjs equivalent (poptfjs has SGD, momentum, Adam and RMSprop from tfjs); pass a poptfjs optimizer instead, e.g. new optim.Adam(model, { lr: 1e-3 }) or new optim.RMSprop(model, { lr: 1e-3 })',
    ],
    [
      'adamax',
      () => tf.train.adamax(0.002),
      'trainingModel: the tfjs Adamax optimizer has no poptfjs equivalent (poptfjs has SGD, momentum, Adam and RMSprop from tfjs); pass a poptfjs optimizer instead, e.g. new optim.Adam(model, { lr: 1e-3 }) or new optim.RMSprop(model, { lr: 1e-3 })',
    ],
    [
      'centered rmsprop',
      () => tf.train.rmsprop(0.01, 0.9, 0, 1e-7, true),
      "trainingModel: tfjs's centered rmsprop has no poptfjs equivalent (it subtracts epsilon inside the root, optim.RMSprop adds it); use new optim.RMSprop(model, { lr, alpha, momentum, centered: true, useTfVariant: true, squareAvgFromZero: true })",
    ],
  ])('refuses tf.train.%s by name, saying what to use instead', (_name, make, message) => {
    const model = regressor(3);
    expect(() => trainingModel(model, { optimizer: make(), loss: 'meanSquaredError' })).toThrow(message);
  });

  it("refuses a compiled model's optimizer it cannot reproduce when the model is first compiled for the IPU", async () => {
    const model = regressor(4);
    model.compile({ optimizer: 'adagrad', loss: 'meanSquaredError' });
    const executor = trainingModel(model);
    await expect(executor.run(tf.zeros([2, 5]), tf.zeros([2, 3]))).rejects.toThrow(
      `trainingModel: the optimizer '${model.name}' was compiled with: the tfjs Adagrad optimizer has no poptfjs equivalent`,
    );
    executor.destroy();
  });

  it("refuses squareAvgFromZero outside TensorFlow's variant of RMSprop", () => {
    expect(() => new optim.RMSprop(regressor(6), { squareAvgFromZero: true })).toThrow(
      "optim.RMSprop: squareAvgFromZero applies to TensorFlow's variant only (PyTorch's square average always starts at zero); pass useTfVariant: true to use it",
    );
  });

  it('refuses a tfjs optimizer that has already taken steps, whose state would be lost', () => {
    const w = tf.variable(tf.ones([2]), true, 'tfjs_stepped_w');
    const optimizer = tf.train.adam(0.1);
    optimizer.minimize(() => tf.sum(tf.square(w)) as tf.Scalar);
    expect(() => trainingModel(() => tf.sum(w), { optimizer })).toThrow(
      'trainingModel: the tfjs Adam optimizer has already taken 1 steps and its state (moments, accumulations) would be lost; pass a fresh tfjs optimizer, or a poptfjs one',
    );
  });

  it("plans a compiled layers model with the optimizer it was compiled with: Adam's two moments per weight", async () => {
    const build = (optimizer: string) => () => {
      const model = regressor(5);
      model.compile({ optimizer, loss: 'meanSquaredError' });
      return model;
    };
    const inputs = [{ shape: [4, 5] }];
    const target = { shape: [4, 3] };
    const withSgd = await plan(build('sgd'), { inputs, target });
    const withAdam = await plan(build('adam'), { inputs, target });
    const weights = 5 * 6 + 6 + 6 * 3 + 3;
    expect(withSgd.memory.ipus[0]!.byKind['optimizer state']).toBe(0);
    expect(withAdam.memory.ipus[0]!.byKind['optimizer state']).toBe(2 * weights * 4);
  });
});
