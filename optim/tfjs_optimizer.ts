/**
 * tfjs's own optimizers (`tf.train.sgd`, `momentum`, `adam`, `rmsprop`, and
 * the one a compiled `tf.LayersModel` holds) as the poptfjs optimizer that
 * takes the same steps:
 *
 * - `sgd(lr)`: `optim.SGD({ lr })`;
 * - `momentum(lr, m, useNesterov)`: `optim.SGD({ lr, momentum: m, nesterov })`
 *   (tfjs's accumulation `a = m·a + g` starts at zero, so its first step is
 *   torch's, whose velocity starts at the gradient);
 * - `adam(lr, beta1, beta2, eps)`: `optim.Adam({ lr, betas, eps })`;
 * - `rmsprop(lr, decay, momentum, eps)`: `optim.RMSprop` in TensorFlow's
 *   variant with the square average from zero (`alpha: decay`,
 *   `useTfVariant`, `squareAvgFromZero`).
 *
 * Optimizers whose steps no poptfjs optimizer takes are refused by name:
 * adagrad, adadelta and adamax, and the centered rmsprop (tfjs subtracts its
 * epsilon inside the root). So is an optimizer that has already taken
 * steps, whose state would be lost.
 */
import * as tf from '@tensorflow/tfjs';
import { Adam } from './adam.js';
import type { Optimizer, OptimizerTarget } from './optimizer.js';
import { optimizerError } from './optimizer_options.js';
import { RMSprop } from './rmsprop.js';
import { SGD } from './sgd.js';

/** Builds a poptfjs optimizer for the model or variables it trains. */
export type OptimizerBuilder = (target: OptimizerTarget) => Optimizer;

/** True if `value` is a tfjs optimizer (`tf.train.*`). */
export function isTfjsOptimizer(value: unknown): value is tf.Optimizer {
  // tf.Optimizer's instanceof checks the object's methods, so only objects may reach it.
  return typeof value === 'object' && value !== null && value instanceof tf.Optimizer;
}

const INSTEAD = 'pass a poptfjs optimizer instead, e.g. new optim.Adam(model, { lr: 1e-3 }) or new optim.RMSprop(model, { lr: 1e-3 })';

/**
 * The builder of the poptfjs optimizer taking the same steps as `optimizer`;
 * an optimizer poptfjs cannot reproduce is refused here, naming it (`where`
 * says whose optimizer it is in errors).
 */
export function tfjsOptimizerEquivalent(optimizer: tf.Optimizer, where: string): OptimizerBuilder {
  const name = optimizer.getClassName();
  const config = optimizer.getConfig() as Record<string, number | boolean>;
  if (optimizer.iterations > 0) {
    throw optimizerError(
      `${where}: the tfjs ${name} optimizer has already taken ${optimizer.iterations} steps and its state (moments, accumulations) would be lost; ` +
        `pass a fresh tfjs optimizer, or a poptfjs one`,
    );
  }
  const lr = config.learningRate as number;
  switch (name) {
    case 'SGD':
      return (target) => new SGD(target, { lr });
    case 'Momentum': {
      const momentum = config.momentum as number;
      return (target) => new SGD(target, { lr, momentum, nesterov: momentum > 0 && config.useNesterov === true });
    }
    case 'Adam':
      return (target) => new Adam(target, { lr, betas: [config.beta1 as number, config.beta2 as number], eps: config.epsilon as number });
    case 'RMSProp':
      if (config.centered === true) {
        throw optimizerError(
          `${where}: tfjs's centered rmsprop has no poptfjs equivalent (it subtracts epsilon inside the root, optim.RMSprop adds it); ` +
            `use new optim.RMSprop(model, { lr, alpha, momentum, centered: true, useTfVariant: true, squareAvgFromZero: true })`,
        );
      }
      return (target) =>
        new RMSprop(target, {
          lr,
          alpha: config.decay as number,
          momentum: config.momentum as number,
          eps: config.epsilon as number,
          useTfVariant: true,
          squareAvgFromZero: true,
        });
    default:
      throw optimizerError(`${where}: the tfjs ${name} optimizer has no poptfjs equivalent (poptfjs has SGD, momentum, Adam and RMSprop from tfjs); ${INSTEAD}`);
  }
}
