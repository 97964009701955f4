/**
 * PopART's `Adaptive` in dictionary form, for its RMSProp modes, trained
 * with poptfjs's `optim.RMSprop` (PyTorch's definition, which is PopART's
 * with an L2 weight decay; `rmspropTFVariant` maps to its `useTfVariant`):
 *
 * ```ts
 * new Adaptive({ defaultLearningRate: [0.01, false], defaultAlpha: [0.9, true] }, { mode: AdaptiveMode.CenteredRMSProp });
 * ```
 *
 * Defaults, as PopART's: learning rate 0.01, no weight decay, alpha 0.99, no
 * momentum, eps 1e-6, loss scaling 1. `AdaGrad` and `AdaDelta`, and a
 * decoupled weight decay (`WeightDecayMode.Decay` with a non-zero weight
 * decay), have no poptfjs optimizer: they are errors that say so.
 */
import type * as tf from '@tensorflow/tfjs';
import { z } from 'zod';
import { PopartException } from '../common/errors.js';
import type { Optimizer } from '../../optim/optimizer.js';
import { RMSprop } from '../../optim/rmsprop.js';
import { checkedArgument } from './checked_argument.js';
import { type HyperParameter, nonNegative, type OptimizerValueArgument, PopartOptimizer, positive, type TrainedWeights } from './popart_optimizer.js';
import { AdaptiveMode, WeightDecayMode } from './session_enums.js';

const PARAMETERS: readonly HyperParameter[] = [
  { key: 'defaultLearningRate', specificKey: 'learningRate', unset: 0.01, range: nonNegative },
  { key: 'defaultWeightDecay', specificKey: 'weightDecay', unset: 0, range: nonNegative },
  { key: 'defaultAlpha', specificKey: 'alpha', unset: 0.99, range: z.number().min(0).max(1) },
  { key: 'defaultMomentum', specificKey: 'momentum', unset: 0, range: nonNegative },
  { key: 'defaultEps', specificKey: 'eps', unset: 1e-6, range: positive },
  { key: 'lossScaling', unset: 1, range: positive },
];

/** Settings of {@link Adaptive} beyond its values. */
export interface AdaptiveSettings {
  /** Which optimizer (default `RMSProp`). */
  readonly mode?: AdaptiveMode;
  /** How weight decay enters the update (default `Decay`). */
  readonly weightDecayMode?: WeightDecayMode;
  /** TensorFlow's RMSProp variant (default false). */
  readonly rmspropTFVariant?: boolean;
}

const settingsSchema = z.strictObject({
  mode: z.enum(Object.values(AdaptiveMode) as [AdaptiveMode, ...AdaptiveMode[]]).default('RMSProp'),
  weightDecayMode: z.enum([WeightDecayMode.Decay, WeightDecayMode.L2Regularization]).default('Decay'),
  rmspropTFVariant: z.boolean().default(false),
});

/** PopART's Adaptive optimizer (RMSProp and centered RMSProp). */
export class Adaptive extends PopartOptimizer {
  /** The optimizer's PopART class name. */
  readonly type = 'Adaptive';
  /** Which optimizer. */
  readonly mode: AdaptiveMode;
  /** How weight decay enters the update. */
  readonly weightDecayMode: WeightDecayMode;
  /** Whether TensorFlow's RMSProp variant is used. */
  readonly rmspropTFVariant: boolean;

  /**
   * @param values the dictionary: `defaultLearningRate`, `defaultWeightDecay`,
   *   `defaultAlpha`, `defaultMomentum`, `defaultEps` and `lossScaling`, each
   *   `[value, isConst]` or a constant number
   * @param settings see {@link AdaptiveSettings}
   */
  constructor(values: Readonly<Record<string, OptimizerValueArgument>> = {}, settings: AdaptiveSettings = {}) {
    super('Adaptive', PARAMETERS, values);
    const checked = checkedArgument(settingsSchema, settings, 'Adaptive settings');
    if (checked.mode === 'AdaGrad' || checked.mode === 'AdaDelta') {
      throw new PopartException(`Adaptive: AdaptiveMode.${checked.mode} is not available (poptfjs has no ${checked.mode} optimizer); use RMSProp or CenteredRMSProp`);
    }
    this.mode = checked.mode;
    this.weightDecayMode = checked.weightDecayMode;
    this.rmspropTFVariant = checked.rmspropTFVariant;
  }

  protected override variant(): string {
    return `mode ${this.mode}, weight decay mode ${this.weightDecayMode}${this.rmspropTFVariant ? ', TensorFlow variant' : ''}`;
  }

  protected override build(weights: TrainedWeights, groups: ReadonlyArray<{ params: tf.Variable[]; values: Map<string, number> }>, defaults: Map<string, number>): Optimizer {
    const decays = [defaults, ...groups.map((g) => g.values)].some((v) => v.get('defaultWeightDecay')! > 0);
    if (decays && this.weightDecayMode === 'Decay') {
      throw new PopartException(
        "Adaptive: a decoupled weight decay (WeightDecayMode.Decay) is not available (poptfjs's RMSprop adds it to the gradient); use WeightDecayMode.L2Regularization",
      );
    }
    const attributes = (values: Map<string, number>) => ({
      lr: values.get('defaultLearningRate')!,
      alpha: values.get('defaultAlpha')!,
      eps: values.get('defaultEps')!,
      weightDecay: values.get('defaultWeightDecay')!,
      momentum: values.get('defaultMomentum')!,
      centered: this.mode === 'CenteredRMSProp',
    });
    return new RMSprop([...weights.values()], {
      ...attributes(defaults),
      lossScaling: defaults.get('lossScaling')!,
      useTfVariant: this.rmspropTFVariant,
      paramGroups: groups.map((g) => ({ params: g.params, ...attributes(g.values) })),
    });
  }
}
