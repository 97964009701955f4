/**
 * AdamW with torch.optim.AdamW's definition (decoupled weight decay:
 * `w -= lr · (update + weightDecay · w)`), and PopTorch's `biasCorrection`
 * (default true) to turn bias correction off. The moments are kept in
 * `firstOrderMomentumAccumType` and `secondOrderMomentumAccumType`;
 * `maxGradNorm` clips the gradients to a global norm first.
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
  /** Decoupled weight decay (default 0.01). */
  weightDecay: nonNegative(0.01),
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
  /** Clip the gradients to this global norm (default Infinity: no clipping). */
  maxGradNorm: positiveOrInfinity(Infinity),
};

/** AdamW's attributes per parameter group. */
export type AdamWGroupAttributes = HyperValues<typeof GROUP>;
/** AdamW's attributes for the whole optimizer. */
export type AdamWAttributes = HyperValues<typeof GLOBAL>;
/** AdamW's options: any attribute, and `paramGroups`. */
export type AdamWOptions = OptimizerOptions<AdamWGroupAttributes, AdamWAttributes>;

/** AdamW, as `new optim.AdamW(modelOrVariables, { lr: 1e-3, weightDecay: 0.01 })`. */
export class AdamW extends Optimizer<AdamWGroupAttributes, AdamWAttributes> {
  /** Learning rate of every group (reading it is an error when groups differ). */
  declare lr: number;
  /** Moment decay rates of every group. */
  declare betas: [number, number];
  /** Denominator term of every group. */
  declare eps: number;
  /** Decoupled weight decay of every group. */
  declare weightDecay: number;
  /** Whether the moments are bias-corrected. */
  declare biasCorrection: boolean;
  /** Precision of the first moment. */
  declare firstOrderMomentumAccumType: 'float32' | 'float16';
  /** Precision of the second moment. */
  declare secondOrderMomentumAccumType: 'float32' | 'float16';
  /** The global gradient norm gradients are clipped to. */
  declare maxGradNorm: number;

  constructor(target: OptimizerTarget, options: AdamWOptions = {}) {
    super('AdamW', target, options, { group: GROUP, global: GLOBAL });
  }

  protected override slotsOf(settings: OptimizerSettings<AdamWGroupAttributes, AdamWAttributes>): StateSlot[] {
    return [
      { name: FIRST_MOMENT, precision: settings.global.firstOrderMomentumAccumType },
      { name: SECOND_MOMENT, precision: settings.global.secondOrderMomentumAccumType },
    ];
  }

  protected override updateParameter(u: ParameterUpdate<AdamWGroupAttributes, AdamWAttributes>): ParameterResult {
    const { lr, betas: b, eps, weightDecay } = u.group;
    const moments = adamMoments(u.grad, u.slots, b, eps, u.step, u.global.biasCorrection, u.stored);
    const update = weightDecay !== 0 ? tf.add(moments.updater, tf.mul(u.weight, weightDecay)) : moments.updater;
    return {
      weight: tf.sub(u.weight, tf.mul(update, lr)),
      slots: { [FIRST_MOMENT]: moments.firstMoment, [SECOND_MOMENT]: moments.secondMoment },
    };
  }
}
