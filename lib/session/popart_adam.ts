/**
 * PopART's `Adam` in dictionary form (Adam, AdamW and LAMB, with and
 * without bias correction), trained with poptfjs's optimizers:
 *
 * - `AdamMode.Adam` / `AdamNoBias` with `WeightDecayMode.Decay` (PopART's
 *   default): `optim.AdamW` (decoupled weight decay, bias correction on or off);
 * - `AdamMode.Adam` with `WeightDecayMode.L2Regularization`: `optim.Adam`;
 * - `AdamMode.Lamb` / `LambNoBias` with `Decay`: `optim.LAMB`.
 *
 * ```ts
 * new Adam({ defaultLearningRate: [1e-3, false], defaultBeta1: [0.9, true] }, { mode: AdamMode.Lamb });
 * ```
 *
 * Defaults, as PopART's: learning rate 0.1, no weight decay, beta1 0.9,
 * beta2 0.999, eps 1e-6, loss scaling 1, max weight norm 10 (LAMB).
 * `AdaMax`, and an L2 weight decay with `AdamNoBias` or LAMB, have no poptfjs
 * optimizer: they are errors that say so.
 */
import type * as tf from '@tensorflow/tfjs';
import { z } from 'zod';
import { PopartException } from '../common/errors.js';
import { Adam as PoptfjsAdam } from '../../optim/adam.js';
import { AdamW } from '../../optim/adamw.js';
import { LAMB } from '../../optim/lamb.js';
import type { Optimizer } from '../../optim/optimizer.js';
import { checkedArgument } from './checked_argument.js';
import { decayRate, type HyperParameter, nonNegative, type OptimizerValueArgument, PopartOptimizer, positive, type TrainedWeights } from './popart_optimizer.js';
import { AdamMode, WeightDecayMode } from './session_enums.js';

const PARAMETERS: readonly HyperParameter[] = [
  { key: 'defaultLearningRate', specificKey: 'learningRate', unset: 0.1, range: nonNegative },
  { key: 'defaultWeightDecay', specificKey: 'weightDecay', unset: 0, range: nonNegative },
  { key: 'defaultBeta1', specificKey: 'beta1', unset: 0.9, range: decayRate },
  { key: 'defaultBeta2', specificKey: 'beta2', unset: 0.999, range: decayRate },
  { key: 'defaultEps', specificKey: 'eps', unset: 1e-6, range: positive },
  { key: 'maxWeightNorm', specificKey: 'maxWeightNorm', unset: 10, range: positive },
  { key: 'lossScaling', unset: 1, range: positive },
];

/** Settings of {@link Adam} beyond its values. */
export interface AdamSettings {
  /** Which update (default `Adam`). */
  readonly mode?: AdamMode;
  /** How weight decay enters the update (default `Decay`). */
  readonly weightDecayMode?: WeightDecayMode;
}

const settingsSchema = z.strictObject({
  mode: z.enum(Object.values(AdamMode) as [AdamMode, ...AdamMode[]]).default('Adam'),
  weightDecayMode: z.enum([WeightDecayMode.Decay, WeightDecayMode.L2Regularization]).default('Decay'),
});

/** PopART's Adam. */
export class Adam extends PopartOptimizer {
  /** The optimizer's PopART class name. */
  readonly type = 'Adam';
  /** Which update. */
  readonly mode: AdamMode;
  /** How weight decay enters the update. */
  readonly weightDecayMode: WeightDecayMode;

  /**
   * @param values the dictionary: `defaultLearningRate`, `defaultWeightDecay`,
   *   `defaultBeta1`, `defaultBeta2`, `defaultEps`, `maxWeightNorm` and
   *   `lossScaling`, each `[value, isConst]` or a constant number
   * @param settings see {@link AdamSettings}
   */
  constructor(values: Readonly<Record<string, OptimizerValueArgument>> = {}, settings: AdamSettings = {}) {
    super('Adam', PARAMETERS, values);
    const checked = checkedArgument(settingsSchema, settings, 'Adam settings');
    if (checked.mode === 'AdaMax') throw new PopartException('Adam: AdamMode.AdaMax is not available (poptfjs has no AdaMax optimizer); use AdamMode.Adam or AdamMode.Lamb');
    this.mode = checked.mode;
    this.weightDecayMode = checked.weightDecayMode;
  }

  protected override variant(): string {
    return `mode ${this.mode}, weight decay mode ${this.weightDecayMode}`;
  }

  protected override build(weights: TrainedWeights, groups: ReadonlyArray<{ params: tf.Variable[]; values: Map<string, number> }>, defaults: Map<string, number>): Optimizer {
    const lamb = this.mode === 'Lamb' || this.mode === 'LambNoBias';
    const decays = [defaults, ...groups.map((g) => g.values)].some((v) => v.get('defaultWeightDecay')! > 0);
    const l2 = this.weightDecayMode === 'L2Regularization' && decays;
    if (l2 && this.mode !== 'Adam') {
      throw new PopartException(
        `Adam: ${this.mode} with WeightDecayMode.L2Regularization is not available (poptfjs's ${lamb ? 'LAMB' : 'AdamW'} decays weights decoupled); use WeightDecayMode.Decay`,
      );
    }
    const attributes = (values: Map<string, number>) => ({
      lr: values.get('defaultLearningRate')!,
      betas: [values.get('defaultBeta1')!, values.get('defaultBeta2')!] as [number, number],
      eps: values.get('defaultEps')!,
      weightDecay: values.get('defaultWeightDecay')!,
      ...(lamb ? { maxWeightNorm: values.get('maxWeightNorm')! } : {}),
    });
    const options = {
      ...attributes(defaults),
      lossScaling: defaults.get('lossScaling')!,
      paramGroups: groups.map((g) => ({ params: g.params, ...attributes(g.values) })),
    };
    const variables = [...weights.values()];
    const biasCorrection = this.mode === 'Adam' || this.mode === 'Lamb';
    if (lamb) return new LAMB(variables, { ...options, biasCorrection });
    return l2 ? new PoptfjsAdam(variables, options) : new AdamW(variables, { ...options, biasCorrection });
  }
}
