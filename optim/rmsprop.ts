/**
 * RMSprop with torch.optim.RMSprop's definition (square average from zero,
 * `eps` added to the root, optional centering and momentum, weight decay as
 * an L2 penalty), or with `useTfVariant: true` TensorFlow's (as PopTorch
 * describes it): the square average starts at one, `eps` is added inside the
 * root, and the learning rate is accumulated in the momentum buffer;
 * `squareAvgFromZero: true` starts that variant's square average at zero, as
 * tfjs's (`tf.train.rmsprop`) and Keras's RMSprop do.
 * The square average is kept in `secondOrderMomentumAccumType`, the
 * gradient average (centered) and the momentum buffer in
 * `firstOrderMomentumAccumType`.
 */
import * as tf from '@tensorflow/tfjs';
import { Optimizer, type OptimizerOptions, type OptimizerSettings, type OptimizerTarget, type ParameterResult, type ParameterUpdate, type StateSlot } from './optimizer.js';
import { accumType, flag, type HyperValues, nonNegative, optimizerError, positive } from './optimizer_options.js';

const GROUP = {
  /** Learning rate (default 1e-2). */
  lr: nonNegative(1e-2),
  /** Smoothing constant of the square average (default 0.99): a number >= 0, not capped at 1, as torch and PopTorch take it. */
  alpha: nonNegative(0.99),
  /** Added to the denominator (default 1e-8). */
  eps: nonNegative(1e-8),
  /** L2 penalty added to the gradient (default 0). */
  weightDecay: nonNegative(0),
  /** Momentum factor (default 0). */
  momentum: nonNegative(0),
  /** Normalise by an estimate of the gradient's variance (default false). */
  centered: flag(false),
};

const GLOBAL = {
  /** Loss scaling factor (default 1). */
  lossScaling: positive(1),
  /** Use TensorFlow's variant (default false). */
  useTfVariant: flag(false),
  /** Start TensorFlow's variant's square average at zero instead of one (default false; with useTfVariant only). */
  squareAvgFromZero: flag(false),
  /** Precision of the gradient accumulator (default float32). */
  accumType: accumType(),
  /** Precision of the gradient average and momentum buffer (default float32). */
  firstOrderMomentumAccumType: accumType(),
  /** Precision of the square average (default float32). */
  secondOrderMomentumAccumType: accumType(),
};

/** RMSprop's attributes per parameter group. */
export type RMSpropGroupAttributes = HyperValues<typeof GROUP>;
/** RMSprop's attributes for the whole optimizer. */
export type RMSpropAttributes = HyperValues<typeof GLOBAL>;
/** RMSprop's options: any attribute, and `paramGroups`. */
export type RMSpropOptions = OptimizerOptions<RMSpropGroupAttributes, RMSpropAttributes>;

const SQUARE_AVERAGE = 'squareAvg';
const GRADIENT_AVERAGE = 'gradAvg';
const MOMENTUM_BUFFER = 'momentumBuffer';

/** RMSprop, as `new optim.RMSprop(modelOrVariables, { lr: 1e-2, alpha: 0.99 })`. */
export class RMSprop extends Optimizer<RMSpropGroupAttributes, RMSpropAttributes> {
  /** Learning rate of every group (reading it is an error when groups differ). */
  declare lr: number;
  /** Smoothing constant of every group. */
  declare alpha: number;
  /** Denominator term of every group. */
  declare eps: number;
  /** L2 penalty of every group. */
  declare weightDecay: number;
  /** Momentum factor of every group. */
  declare momentum: number;
  /** Centering in every group. */
  declare centered: boolean;
  /** Whether TensorFlow's variant is used. */
  declare useTfVariant: boolean;
  /** Whether TensorFlow's variant's square average starts at zero. */
  declare squareAvgFromZero: boolean;
  /** Precision of the gradient average and momentum buffer. */
  declare firstOrderMomentumAccumType: 'float32' | 'float16';
  /** Precision of the square average. */
  declare secondOrderMomentumAccumType: 'float32' | 'float16';

  constructor(target: OptimizerTarget, options: RMSpropOptions = {}) {
    super('RMSprop', target, options, { group: GROUP, global: GLOBAL });
  }

  protected override checkGlobal(global: Readonly<RMSpropAttributes>, where: string): void {
    if (global.squareAvgFromZero && !global.useTfVariant) {
      throw optimizerError(
        `${where}: squareAvgFromZero applies to TensorFlow's variant only (PyTorch's square average always starts at zero); pass useTfVariant: true to use it`,
      );
    }
  }

  protected override slotsOf(settings: OptimizerSettings<RMSpropGroupAttributes, RMSpropAttributes>): StateSlot[] {
    const { firstOrderMomentumAccumType: first, secondOrderMomentumAccumType: second } = settings.global;
    const slots: StateSlot[] = [{ name: SQUARE_AVERAGE, precision: second }];
    if (settings.groups.some((g) => g.centered)) slots.push({ name: GRADIENT_AVERAGE, precision: first });
    if (settings.groups.some((g) => g.momentum !== 0)) slots.push({ name: MOMENTUM_BUFFER, precision: first });
    return slots;
  }

  /** The square average starts at one in TensorFlow's variant (unless `squareAvgFromZero`), the other slots at zero. */
  protected override slotStart(slot: string, settings: OptimizerSettings<RMSpropGroupAttributes, RMSpropAttributes>): number {
    return slot === SQUARE_AVERAGE && settings.global.useTfVariant && !settings.global.squareAvgFromZero ? 1 : 0;
  }

  protected override updateParameter(u: ParameterUpdate<RMSpropGroupAttributes, RMSpropAttributes>): ParameterResult {
    const { lr, alpha, eps, weightDecay, momentum, centered } = u.group;
    const tfVariant = u.global.useTfVariant;
    const g = weightDecay !== 0 ? tf.add(u.grad, tf.mul(u.weight, weightDecay)) : u.grad;
    const squareAverage = u.stored(SQUARE_AVERAGE, tf.add(tf.mul(u.slots[SQUARE_AVERAGE]!, alpha), tf.mul(tf.square(g), 1 - alpha)));
    const slots: Record<string, tf.Tensor> = { [SQUARE_AVERAGE]: squareAverage };
    let variance = squareAverage;
    if (centered) {
      const gradAverage = u.stored(GRADIENT_AVERAGE, tf.add(tf.mul(u.slots[GRADIENT_AVERAGE]!, alpha), tf.mul(g, 1 - alpha)));
      slots[GRADIENT_AVERAGE] = gradAverage;
      variance = tf.sub(squareAverage, tf.square(gradAverage));
    }
    const denominator = tfVariant ? tf.sqrt(tf.add(variance, eps)) : tf.add(tf.sqrt(variance), eps);
    const step = tf.div(g, denominator);
    if (momentum === 0) return { weight: tf.sub(u.weight, tf.mul(step, lr)), slots };
    const increment = tfVariant ? tf.mul(step, lr) : step;
    const buffer = u.stored(MOMENTUM_BUFFER, tf.add(tf.mul(u.slots[MOMENTUM_BUFFER]!, momentum), increment));
    slots[MOMENTUM_BUFFER] = buffer;
    return { weight: tf.sub(u.weight, tfVariant ? buffer : tf.mul(buffer, lr)), slots };
  }
}
