/**
 * Adam with torch.optim.Adam's definition: weight decay is an L2 penalty
 * added to the gradient, moments start from zero, with bias correction.
 * The first and second moments are kept in `firstOrderMomentumAccumType`
 * and `secondOrderMomentumAccumType`; `maxGradNorm` clips the gradients to a
 * global norm first. AMSGrad is not supported (as in PopTorch).
 */
import * as tf from '@tensorflow/tfjs';
import { adamMoments, FIRST_MOMENT, SECOND_MOMENT } from './adam_moments.js';
import { Optimizer, type OptimizerOptions, type OptimizerSettings, type OptimizerTarget, type ParameterResult, type ParameterUpdate, type StateSlot } from './optimizer.js';
import { accumType, betas, type HyperValues, nonNegative, positive, positiveOrInfinity } from './optimizer_options.js';

const GROUP = {
  /** Learning rate (default 1e-3). */
  lr: nonNegative(1e-3),
  /** `[beta1, beta2]`, the decay rates of the moments (default [0.9, 0.999]). */
  betas: betas([0.9, 0.999]),
  /** Added to the denominator (default 1e-8). */
  eps: nonNegative(1e-8),
  /** L2 penalty added to the gradient (default 0). */
  weightDecay: nonNegative(0),
};

const GLOBAL = {
  /** Loss scaling factor (default 1). */
  lossScaling: positive(1),
  /** Precision of the gradient accumulator (default float32). */
  accumType: accumType(),
  /** Precision of the first moment (default float32). */
  firstOrderMomentumAccumType: accumType(),
  /** Precision of the second moment (default float32). */
  secondOrderMomentumAccumType: accumType(),
  /** Clip the gradients to this global norm (default Infinity: no clipping). */
  maxGradNorm: positiveOrInfinity(Infinity),
};

/** Adam's attributes per parameter group. */
export type AdamGroupAttributes = HyperValues<typeof GROUP>;
/** Adam's attributes for the whole optimizer. */
export type AdamAttributes = HyperValues<typeof GLOBAL>;
/** Adam's options: any attribute, and `paramGroups`. */
export type AdamOptions = OptimizerOptions<AdamGroupAttributes, AdamAttributes>;

/** Adam, as `new optim.Adam(modelOrVariables, { lr: 1e-3 })`. */
export class Adam extends Optimizer<AdamGroupAttributes, AdamAttributes> {
  /** Learning rate of every group (reading it is an error when groups differ). */
  declare lr: number;
  /** Moment decay rates of every group. */
  declare betas: [number, number];
  /** Denominator term of every group. */
  declare eps: number;
  /** L2 penalty of every group. */
  declare weightDecay: number;
  /** Precision of the first moment. */
  declare firstOrderMomentumAccumType: 'float32' | 'float16';
  /** Precision of the second moment. */
  declare secondOrderMomentumAccumType: 'float32' | 'float16';
  /** The global gradient norm gradients are clipped to. */
  declare maxGradNorm: number;

  constructor(target: OptimizerTarget, options: AdamOptions = {}) {
    super('Adam', target, options, { group: GROUP, global: GLOBAL });
  }

  protected override slotsOf(settings: OptimizerSettings<AdamGroupAttributes, AdamAttributes>): StateSlot[] {
    return [
      { name: FIRST_MOMENT, precision: settings.global.firstOrderMomentumAccumType },
      { name: SECOND_MOMENT, precision: settings.global.secondOrderMomentumAccumType },
    ];
  }

  protected override updateParameter(u: ParameterUpdate<AdamGroupAttributes, AdamAttributes>): ParameterResult {
    const { lr, betas: b, eps, weightDecay } = u.group;
    const g = weightDecay !== 0 ? tf.add(u.grad, tf.mul(u.weight, weightDecay)) : u.grad;
    const moments = adamMoments(g, u.slots, b, eps, u.step, true, u.stored);
    return {
      weight: tf.sub(u.weight, tf.mul(moments.updater, lr)),
      slots: { [FIRST_MOMENT]: moments.firstMoment, [SECOND_MOMENT]: moments.secondMoment },
    };
  }
}
