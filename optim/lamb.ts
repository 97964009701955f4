/**
 * LAMB (You et al., 2020) with PopART's definition: Adam's moments (with
 * optional bias correction), the updater `x = mc / (sqrt(vc) + eps) + wd·w`,
 * and the layer-wise trust ratio `phi(||w||) / ||x||` with
 * `phi(r) = min(r, maxWeightNorm)` (1 when either norm is 0):
 * `w -= lr · phi(||w||) / ||x|| · x`. The moments are kept in
 * `firstOrderMomentumAccumType` and `secondOrderMomentumAccumType`.
 */
import * as tf from '@tensorflow/tfjs';
import { adamMoments, FIRST_MOMENT, SECOND_MOMENT } from './adam_moments.js';
import { Optimizer, type OptimizerOptions, type OptimizerSettings, type OptimizerTarget, type ParameterResult, type ParameterUpdate, type StateSlot } from './optimizer.js';
import { accumType, betas, flag, type HyperValues, nonNegative, positive, positiveOrInfinity } from './optimizer_options.js';

const GROUP = {
  /** Learning rate (default 1e-3). */
  lr: nonNegative(1e-3),
  /** `[beta1, beta2]` (default [0.9, 0.999]). */
  betas: betas([0.9, 0.999]),
  /** Added to the denominator (default 1e-8). */
  eps: nonNegative(1e-8),
  /** Weight decay added to the updater (default 0.01). */
  weightDecay: nonNegative(0.01),
  /** The largest weight norm the trust ratio uses (default 65500; Infinity: no limit). */
  maxWeightNorm: positiveOrInfinity(65500),
};

const GLOBAL = {
  /** Loss scaling factor (default 1). */
  lossScaling: positive(1),
  /** Bias-correct the moments (default true). */
  biasCorrection: flag(true),
  /** Precision of the gradient accumulator (default float32). */
  accumType: accumType(),
  /** Precision of the first moment (default float32). */
  firstOrderMomentumAccumType: accumType(),
  /** Precision of the second moment (default float32). */
  secondOrderMomentumAccumType: accumType(),
};

/** LAMB's attributes per parameter group. */
export type LAMBGroupAttributes = HyperValues<typeof GROUP>;
/** LAMB's attributes for the whole optimizer. */
export type LAMBAttributes = HyperValues<typeof GLOBAL>;
/** LAMB's options: any attribute, and `paramGroups`. */
export type LAMBOptions = OptimizerOptions<LAMBGroupAttributes, LAMBAttributes>;

/** LAMB, as `new optim.LAMB(modelOrVariables, { lr: 1e-3 })`. */
export class LAMB extends Optimizer<LAMBGroupAttributes, LAMBAttributes> {
  /** Learning rate of every group (reading it is an error when groups differ). */
  declare lr: number;
  /** Moment decay rates of every group. */
  declare betas: [number, number];
  /** Denominator term of every group. */
  declare eps: number;
  /** Weight decay of every group. */
  declare weightDecay: number;
  /** The trust ratio's weight norm limit of every group. */
  declare maxWeightNorm: number;
  /** Whether the moments are bias-corrected. */
  declare biasCorrection: boolean;
  /** Precision of the first moment. */
  declare firstOrderMomentumAccumType: 'float32' | 'float16';
  /** Precision of the second moment. */
  declare secondOrderMomentumAccumType: 'float32' | 'float16';

  constructor(target: OptimizerTarget, options: LAMBOptions = {}) {
    super('LAMB', target, options, { group: GROUP, global: GLOBAL });
  }

  protected override slotsOf(settings: OptimizerSettings<LAMBGroupAttributes, LAMBAttributes>): StateSlot[] {
    return [
      { name: FIRST_MOMENT, precision: settings.global.firstOrderMomentumAccumType },
      { name: SECOND_MOMENT, precision: settings.global.secondOrderMomentumAccumType },
    ];
  }

  protected override updateParameter(u: ParameterUpdate<LAMBGroupAttributes, LAMBAttributes>): ParameterResult {
    const { lr, betas: b, eps, weightDecay, maxWeightNorm } = u.group;
    const moments = adamMoments(u.grad, u.slots, b, eps, u.step, u.global.biasCorrection, u.stored);
    const update = weightDecay !== 0 ? tf.add(moments.updater, tf.mul(u.weight, weightDecay)) : moments.updater;
    const weightNorm = tf.minimum(tf.norm(u.weight), maxWeightNorm);
    const updateNorm = tf.norm(update);
    const either0 = tf.logicalOr(tf.equal(weightNorm, 0), tf.equal(updateNorm, 0));
    const trust = tf.where(either0, tf.onesLike(weightNorm), tf.div(weightNorm, updateNorm));
    return {
      weight: tf.sub(u.weight, tf.mul(update, tf.mul(trust, lr))),
      slots: { [FIRST_MOMENT]: moments.firstMoment, [SECOND_MOMENT]: moments.secondMoment },
    };
  }
}
