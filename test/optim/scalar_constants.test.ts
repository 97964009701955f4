/**
 * The scalars an update multiplies by, kept between steps: the same float32
 * scalars `tf.mul(x, number)` makes, an SGD update with them equal bit for
 * bit to the formula written with numbers, and a changed learning rate taking
 * effect on the next step.
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { optim, trainingModel } from 'poptfjs';
import { emptyOptimizerState } from '../../optim/optimizer_state.js';
import { ScalarConstants } from '../../optim/scalar_constants.js';
import { Float16Rounding } from '../../lib/precision/float16_rounding.js';
import { RandomSource } from '../../lib/executable/random_source.js';
import { liveTensors, variableOf } from '../helpers.js';

describe('ScalarConstants', () => {
  it('give the float32 scalar of a number, the same tensor while it is asked for each step, and dispose it after a step without it', () => {
    const scalars = new ScalarConstants();
    const before = liveTensors();
    const first = scalars.of(0.1);
    expect(first.dtype).toBe('float32');
    expect(first.dataSync()).toEqual(tf.tidy(() => tf.scalar(0.1).dataSync()));
    expect(scalars.of(0.1)).toBe(first);
    scalars.endStep();
    expect(scalars.of(0.1)).toBe(first);
    scalars.endStep();
    const other = scalars.of(0.2);
    scalars.endStep();
    expect(first.isDisposed).toBe(true);
    expect(other.isDisposed).toBe(false);
    expect(liveTensors()).toBe(before + 1);
    scalars.dispose();
    expect(other.isDisposed).toBe(true);
    expect(liveTensors()).toBe(before);
  });

  it('keep -0 apart from 0 and survive a tf.tidy', () => {
    const scalars = new ScalarConstants();
    const [zero, minusZero] = tf.tidy(() => [scalars.of(0), scalars.of(-0)]);
    const product = (s: tf.Tensor) => tf.tidy(() => tf.mul(tf.scalar(1), s).dataSync()[0]);
    expect(Object.is(product(zero!), 0)).toBe(true);
    expect(Object.is(product(minusZero!), -0)).toBe(true);
    scalars.dispose();
  });
});

/** The weights after `steps` SGD updates of `weights` by `grads`, each step with the options the step gives. */
function sgdUpdates(steps: optim.SGDOptions[], weights: tf.Tensor[], grads: tf.Tensor[]): Float32Array[] {
  const variables = weights.map((w) => tf.variable(w));
  const state = emptyOptimizerState();
  const scalars = new ScalarConstants();
  const rounding = new Float16Rounding(false, new RandomSource(1));
  let current = new Map(variables.map((v, i) => [v.name, tf.clone(weights[i]!)]));
  for (const options of steps) {
    const sgd = new optim.SGD(variables, options);
    const next = sgd.apply({ weights: current, grads: new Map(variables.map((v, i) => [v.name, grads[i]!])), state, half: new Set(), rounding, scalars }, sgd.settings());
    scalars.endStep();
    tf.dispose([...current.values()]);
    current = next;
  }
  const values = [...current.values()].map((t) => t.dataSync() as Float32Array);
  tf.dispose([...current.values(), ...variables]);
  for (const slots of state.slots.values()) tf.dispose(Object.values(slots));
  scalars.dispose();
  return values;
}

/** The same updates by torch.optim.SGD's formula written with numbers, as tfjs computes it. */
function sgdByNumbers(steps: optim.SGDOptions[], weights: tf.Tensor[], grads: tf.Tensor[]): Float32Array[] {
  return weights.map((w0, i) =>
    tf.tidy(() => {
      let w = w0;
      let velocity: tf.Tensor | undefined;
      for (const { lr = 0.01, momentum = 0, dampening = 0, weightDecay = 0, nesterov = false } of steps) {
        const g = weightDecay !== 0 ? tf.add(grads[i]!, tf.mul(w, weightDecay)) : grads[i]!;
        if (momentum === 0) {
          w = tf.sub(w, tf.mul(g, lr));
          continue;
        }
        velocity = velocity === undefined ? g : tf.add(tf.mul(velocity, momentum), tf.mul(g, 1 - dampening));
        const direction = nesterov ? tf.add(g, tf.mul(velocity, momentum)) : velocity;
        w = tf.sub(w, tf.mul(direction, lr));
      }
      return w.dataSync() as Float32Array;
    }),
  );
}

describe('SGD with kept scalars', () => {
  const weights = [tf.randomNormal([3, 5], 0, 1, 'float32', 11), tf.randomNormal([5], 0, 1, 'float32', 12)];
  const grads = [tf.randomNormal([3, 5], 0, 1, 'float32', 13), tf.randomNormal([5], 0, 1, 'float32', 14)];

  it.each<[string, optim.SGDOptions[]]>([
    ['plain, the learning rate changed at the third step', [{ lr: 0.1 }, { lr: 0.1 }, { lr: 0.037 }, { lr: 0.037 }]],
    [
      'momentum, dampening and weight decay',
      [
        { lr: 0.1, momentum: 0.9, dampening: 0.3, weightDecay: 0.01 },
        { lr: 0.1, momentum: 0.9, dampening: 0.3, weightDecay: 0.01 },
        { lr: 0.05, momentum: 0.9, dampening: 0.3, weightDecay: 0.01 },
      ],
    ],
    [
      'Nesterov momentum',
      [
        { lr: 0.1, momentum: 0.8, nesterov: true },
        { lr: 0.2, momentum: 0.8, nesterov: true },
        { lr: 0.2, momentum: 0.7, nesterov: true },
      ],
    ],
  ])('updates as the formula with numbers, bit for bit (%s)', (_name, steps) => {
    const kept = sgdUpdates(steps, weights, grads);
    const expected = sgdByNumbers(steps, weights, grads);
    kept.forEach((values, i) => expect(values).toEqual(expected[i]));
  });

  it('takes a learning rate changed by setOptimizer on the next step, and keeps no scalar of an old one', async () => {
    const model = tf.sequential({ layers: [tf.layers.dense({ units: 3, inputShape: [4], kernelInitializer: tf.initializers.glorotUniform({ seed: 5 }) })] });
    const x = tf.randomNormal([4, 4], 0, 1, 'float32', 1);
    const y = tf.randomNormal([4, 3], 0, 1, 'float32', 2);
    const opt = new optim.SGD(model, { lr: 0.1 });
    const executor = trainingModel(model, { loss: 'meanSquaredError', optimizer: opt });
    const kernel = () => {
      executor.copyWeightsToHost();
      return variableOf(model.trainableWeights[0]!).dataSync().slice();
    };
    const step = async () => tf.dispose((await executor.run(x, y)) as tf.Tensor[]);
    await step();
    const afterFirst = kernel();
    opt.lr = 0;
    executor.setOptimizer(opt);
    await step();
    expect(kernel()).toEqual(afterFirst);
    const tensors = liveTensors();
    await step();
    expect(kernel()).toEqual(afterFirst);
    expect(liveTensors()).toBe(tensors);
    opt.lr = 0.1;
    executor.setOptimizer(opt);
    await step();
    expect(kernel()).not.toEqual(afterFirst);
    expect(liveTensors()).toBe(tensors);
    executor.destroy();
  });
});
