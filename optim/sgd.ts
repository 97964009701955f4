/**
 * Stochastic gradient descent with torch.optim.SGD's definition of momentum,
 * dampening, Nesterov momentum and weight decay, and PopTorch's two variants:
 *
 * - separate (default): the velocity is a state of its own
 *   (`momentumBuffer`, kept in `firstOrderMomentumAccumType`), gradients are
 *   accumulated in `accumType`;
 * - combined (`useCombinedAccum: true`): one tensor per parameter holds the
 *   velocity multiplied by `velocityScaling` (`scaledVelocity`, kept in the
 *   parameter's precision, so float16 for float16 parameters); gradients are
 *   accumulated in the parameter's precision (`accumType` and
 *   `firstOrderMomentumAccumType` are ignored with a warning, as in PopTorch). In effect the gradients reach
 *   it scaled by `velocityScaling / lossScaling`, so velocity scaling keeps
 *   small float16 velocities from underflowing.
 *
 * Both variants give the same result in float32. Without momentum there is
 * no state.
 */
import * as tf from '@tensorflow/tfjs';
import {
  Optimizer,
  type OptimizerOptions,
  type OptimizerSettings,
  type OptimizerTarget,
  type ParameterResult,
  type ParameterUpdate,
  type StateSlot,
  type SlotPrecision,
} from './optimizer.js';
import { accumType, flag, type HyperValues, nonNegative, optimizerError, positive, positiveOrInfinity } from './optimizer_options.js';

const GROUP = {
  /** Learning rate (default 0.01). */
  lr: nonNegative(0.01),
  /** Momentum factor (default 0). */
  momentum: nonNegative(0),
  /** Dampening of the momentum (default 0). */
  dampening: nonNegative(0),
  /** L2 penalty added to the gradient (default 0). */
  weightDecay: nonNegative(0),
  /** Nesterov momentum (default false; needs momentum > 0 and dampening 0). */
  nesterov: flag(false),
  /** The factor the combined velocity is stored multiplied by (default 1; combined variant only). */
  velocityScaling: positive(1),
};

const GLOBAL = {
  /** Loss scaling factor (default 1). */
  lossScaling: positive(1),
  /** Use the combined variant (default false). */
  useCombinedAccum: flag(false),
  /** Precision of the gradient accumulator (separate variant; default float32). */
  accumType: accumType(),
  /** Precision of the velocity (separate variant; default float32). */
  firstOrderMomentumAccumType: accumType(),
  /** Clip the gradients to this global norm (default Infinity: no clipping). */
  maxGradNorm: positiveOrInfinity(Infinity),
};

/** SGD's attributes per parameter group. */
export type SGDGroupAttributes = HyperValues<typeof GROUP>;
/** SGD's attributes for the whole optimizer. */
export type SGDAttributes = HyperValues<typeof GLOBAL>;
/** SGD's options: any attribute, and `paramGroups`. */
export type SGDOptions = OptimizerOptions<SGDGroupAttributes, SGDAttributes>;

const MOMENTUM_BUFFER = 'momentumBuffer';
const SCALED_VELOCITY = 'scaledVelocity';

/** SGD, as `new optim.SGD(modelOrVariables, { lr: 0.01, momentum: 0.9 })`. */
export class SGD extends Optimizer<SGDGroupAttributes, SGDAttributes> {
  /** Learning rate of every group (reading it is an error when groups differ). */
  declare lr: number;
  /** Momentum factor of every group. */
  declare momentum: number;
  /** Dampening of every group. */
  declare dampening: number;
  /** L2 penalty of every group. */
  declare weightDecay: number;
  /** Nesterov momentum in every group. */
  declare nesterov: boolean;
  /** Velocity scaling of every group (combined variant). */
  declare velocityScaling: number;
  /** Whether the combined variant is used. */
  declare useCombinedAccum: boolean;
  /** Precision of the velocity in the separate variant. */
  declare firstOrderMomentumAccumType: 'float32' | 'float16';
  /** The global gradient norm gradients are clipped to. */
  declare maxGradNorm: number;

  constructor(target: OptimizerTarget, options: SGDOptions = {}) {
    super('SGD', target, options, { group: GROUP, global: GLOBAL });
  }

  protected override checkGroup(global: Readonly<SGDAttributes>, group: Readonly<SGDGroupAttributes>, where: string): void {
    if (group.nesterov && (group.momentum <= 0 || group.dampening !== 0)) {
      throw optimizerError(`${where}: Nesterov momentum requires momentum > 0 and dampening 0 (momentum ${group.momentum}, dampening ${group.dampening})`);
    }
    if (group.velocityScaling !== 1 && !global.useCombinedAccum) {
      throw optimizerError(`${where}: velocityScaling applies to the combined variant only; pass useCombinedAccum: true to use it`);
    }
  }

  /** As in PopTorch, the combined variant ignores `accumType` and `firstOrderMomentumAccumType` (with a warning): its one tensor has the parameter's precision. */
  protected override checkGlobal(global: Readonly<SGDAttributes>, where: string): void {
    if (!global.useCombinedAccum) return;
    for (const key of ['accumType', 'firstOrderMomentumAccumType'] as const) {
      if (global[key] === 'float16') {
        this.warnOnce(
          `${where}: ${key} 'float16' is ignored with useCombinedAccum: true; the combined variant accumulates gradients and velocity in one tensor of the parameter's precision`,
        );
      }
    }
  }

  protected override slotsOf(settings: OptimizerSettings<SGDGroupAttributes, SGDAttributes>): StateSlot[] {
    if (!settings.groups.some((g) => g.momentum !== 0)) return [];
    const { useCombinedAccum, firstOrderMomentumAccumType } = settings.global;
    return [useCombinedAccum ? { name: SCALED_VELOCITY, precision: 'parameter' } : { name: MOMENTUM_BUFFER, precision: firstOrderMomentumAccumType }];
  }

  override accumulatorPrecision(settings: OptimizerSettings<SGDGroupAttributes, SGDAttributes>): SlotPrecision {
    return settings.global.useCombinedAccum ? 'parameter' : settings.global.accumType;
  }

  /**
   * The combined variant with momentum is PopART's SGD1: the gradients of
   * each micro-batch go straight into the velocity, which is the one tensor
   * it keeps (graphcore/popart willow/include/popart/sgd.hpp: "for each micro
   * batch v += ... g"; `SGD::createOp` makes an `SGD1ComboOp`). Without
   * momentum it is PopART's SGD0, which accumulates in a tensor of its own.
   */
  override separateAccumulator(settings: OptimizerSettings<SGDGroupAttributes, SGDAttributes>): boolean {
    return !(settings.global.useCombinedAccum && settings.groups.some((g) => g.momentum !== 0));
  }

  protected override updateParameter(u: ParameterUpdate<SGDGroupAttributes, SGDAttributes>): ParameterResult {
    const { lr, momentum, dampening, weightDecay, nesterov, velocityScaling } = u.group;
    const g = weightDecay !== 0 ? tf.add(u.grad, tf.mul(u.weight, u.scalar(weightDecay))) : u.grad;
    if (momentum === 0) return { weight: tf.sub(u.weight, tf.mul(g, u.scalar(lr))), slots: {} };
    let velocity: tf.Tensor;
    let slots: Record<string, tf.Tensor>;
    // As torch.optim.SGD: the first step's velocity is the gradient itself (no dampening); the zeros the state starts at are not used.
    const first = u.step === 1;
    if (u.global.useCombinedAccum) {
      const previous = u.slots[SCALED_VELOCITY]!;
      const scaled = u.stored(
        SCALED_VELOCITY,
        first ? tf.mul(g, u.scalar(velocityScaling)) : tf.add(tf.mul(previous, u.scalar(momentum)), tf.mul(g, u.scalar((1 - dampening) * velocityScaling))),
      );
      velocity = tf.div(scaled, u.scalar(velocityScaling));
      slots = { [SCALED_VELOCITY]: scaled };
    } else {
      const previous = u.slots[MOMENTUM_BUFFER]!;
      velocity = u.stored(MOMENTUM_BUFFER, first ? tf.clone(g) : tf.add(tf.mul(previous, u.scalar(momentum)), tf.mul(g, u.scalar(1 - dampening))));
      slots = { [MOMENTUM_BUFFER]: velocity };
    }
    const direction = nesterov ? tf.add(g, tf.mul(velocity, u.scalar(momentum))) : velocity;
    return { weight: tf.sub(u.weight, tf.mul(direction, u.scalar(lr))), slots };
  }
}
