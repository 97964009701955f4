/**
 * PopART's `SGD` and `ConstSGD` in dictionary form, trained with poptfjs's
 * `optim.SGD`:
 *
 * ```ts
 * new SGD({ defaultLearningRate: [0.01, false], defaultMomentum: [0.9, true] });
 * new ConstSGD(0.001);
 * ```
 *
 * PopART's update is PyTorch's (weight decay as an L2 term, momentum with
 * dampening, Nesterov), except that without momentum the dampening still
 * scales the step: `w -= lr · (1 - dampening) · (g + wd · w)`. One
 * difference remains with momentum and a non-zero dampening: PopART's
 * velocity starts at zero, so its first step is `(1 - dampening) · g`, where
 * `optim.SGD` (PyTorch's definition) starts the velocity at `g`; later steps
 * agree. Defaults, as PopART's: learning rate 0.1, no weight decay, momentum
 * or dampening, velocity scaling 1, loss scaling 1, all constant.
 */
import type * as tf from '@tensorflow/tfjs';
import { z } from 'zod';
import { SGD as PoptfjsSGD } from '../../optim/sgd.js';
import type { Optimizer } from '../../optim/optimizer.js';
import { checkedArgument } from './checked_argument.js';
import { type HyperParameter, nonNegative, type OptimizerValueArgument, PopartOptimizer, positive, type TrainedWeights } from './popart_optimizer.js';
import { SGDAccumulatorAndMomentum } from './session_enums.js';

const PARAMETERS: readonly HyperParameter[] = [
  { key: 'defaultLearningRate', specificKey: 'learningRate', unset: 0.1, range: nonNegative },
  { key: 'defaultWeightDecay', specificKey: 'weightDecay', unset: 0, range: nonNegative },
  { key: 'defaultMomentum', specificKey: 'momentum', unset: 0, range: nonNegative },
  { key: 'defaultDampening', specificKey: 'dampening', unset: 0, range: z.number().min(0).max(1) },
  { key: 'defaultVelocityScaling', specificKey: 'velocityScaling', unset: 1, range: positive },
  { key: 'defaultNesterov', specificKey: 'nesterov', unset: 0, range: z.number().min(0).max(1) },
  { key: 'lossScaling', unset: 1, range: positive },
];

/** Settings of {@link SGD} beyond its values. */
export interface SGDSettings {
  /** Whether one tensor holds the gradient accumulator and the momentum (`Combined`, PopART's default) or two (`Separate`). */
  readonly accumulatorAndMomentum?: SGDAccumulatorAndMomentum;
}

const settingsSchema = z.strictObject({
  accumulatorAndMomentum: z.enum([SGDAccumulatorAndMomentum.Combined, SGDAccumulatorAndMomentum.Separate]).default('Combined'),
});

/** PopART's SGD. */
export class SGD extends PopartOptimizer {
  /** The optimizer's PopART class name. */
  readonly type = 'SGD';
  /** How the accumulator and the momentum are kept. */
  readonly accumulatorAndMomentum: SGDAccumulatorAndMomentum;

  /**
   * @param values the dictionary: `defaultLearningRate`, `defaultWeightDecay`,
   *   `defaultMomentum`, `defaultDampening`, `defaultVelocityScaling`,
   *   `defaultNesterov` (0 or 1) and `lossScaling`, each `[value, isConst]` or
   *   a constant number; or a learning rate (not constant), as older PopART's `SGD(lr)`
   * @param settings see {@link SGDSettings}
   */
  constructor(values: Readonly<Record<string, OptimizerValueArgument>> | number = {}, settings: SGDSettings = {}) {
    super('SGD', PARAMETERS, typeof values === 'number' ? { defaultLearningRate: [values, false] } : values);
    this.accumulatorAndMomentum = checkedArgument(settingsSchema, settings, 'SGD settings').accumulatorAndMomentum;
  }

  protected override variant(): string {
    return `accumulatorAndMomentum ${this.accumulatorAndMomentum}`;
  }

  private attributes(values: Map<string, number>): Record<string, number | boolean> {
    const momentum = values.get('defaultMomentum')!;
    const dampening = values.get('defaultDampening')!;
    return {
      lr: momentum === 0 ? values.get('defaultLearningRate')! * (1 - dampening) : values.get('defaultLearningRate')!,
      momentum,
      dampening: momentum === 0 ? 0 : dampening,
      weightDecay: values.get('defaultWeightDecay')!,
      nesterov: values.get('defaultNesterov')! !== 0,
      ...(this.accumulatorAndMomentum === 'Combined' ? { velocityScaling: values.get('defaultVelocityScaling')! } : {}),
    };
  }

  protected override build(weights: TrainedWeights, groups: ReadonlyArray<{ params: tf.Variable[]; values: Map<string, number> }>, defaults: Map<string, number>): Optimizer {
    return new PoptfjsSGD([...weights.values()], {
      ...this.attributes(defaults),
      lossScaling: defaults.get('lossScaling')!,
      useCombinedAccum: this.accumulatorAndMomentum === 'Combined',
      paramGroups: groups.map((g) => ({ params: g.params, ...this.attributes(g.values) })),
    });
  }
}

/** PopART's ConstSGD: SGD whose learning rate, weight decay and loss scaling never change. */
export class ConstSGD extends SGD {
  /**
   * @param learningRate the learning rate
   * @param weightDecay the weight decay (default 0)
   * @param lossScaling the loss scaling (default 1)
   */
  constructor(learningRate: number, weightDecay = 0, lossScaling = 1) {
    super({ defaultLearningRate: [learningRate, true], defaultWeightDecay: [weightDecay, true], lossScaling: [lossScaling, true] });
  }
}
