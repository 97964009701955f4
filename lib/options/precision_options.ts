/**
 * `opts.Precision`: options about float16 and numerical behaviour (PopTorch's
 * `_PrecisionOptions`).
 */
import { z } from 'zod';
import { type ArgumentRule, checkArgument, enumRule, flag } from './argument_rules.js';
import { HalfFloatCastingBehavior, PartialsType } from './enums.js';
import type { MutationGuard } from './frozen_options.js';

/** The precision options as plain data. */
export interface PrecisionSettings {
  /** The type of matmul and convolution partials (default `'float'`). */
  readonly partialsType: PartialsType;
  /** Whether float16 results are rounded stochastically (default false). */
  readonly stochasticRounding: boolean;
  /** Whether floating point exceptions stop the run (default false). */
  readonly floatingPointExceptions: boolean;
  /** How operations mixing float16 and float32 inputs are cast (default `HalfUpcastToFloat`). */
  readonly halfFloatCasting: HalfFloatCastingBehavior;
  /** Whether batch-norm running statistics are kept in float32 whatever the input type (default true). */
  readonly runningStatisticsAlwaysFloat: boolean;
}

/** The defaults of {@link PrecisionSettings}. */
const DEFAULT_PRECISION_SETTINGS: PrecisionSettings = Object.freeze({
  partialsType: PartialsType.Float,
  stochasticRounding: false,
  floatingPointExceptions: false,
  halfFloatCasting: HalfFloatCastingBehavior.HalfUpcastToFloat,
  runningStatisticsAlwaysFloat: true,
});

const partialsRule: ArgumentRule<PartialsType> = {
  schema: z.enum([PartialsType.Float, PartialsType.Half]),
  jsType: 'string',
  expected: '"float" or "half"',
};
const castingRule = enumRule(HalfFloatCastingBehavior, 'HalfFloatCastingBehavior');

/**
 * Options about float16 and numerical behaviour; reach them as `opts.Precision`.
 * Every setter returns the group. All of them are stored and reported; they
 * have no effect on the simulated engine yet.
 */
export class PrecisionOptions {
  #values: PrecisionSettings = DEFAULT_PRECISION_SETTINGS;
  readonly #guard: MutationGuard;

  /** @internal `Options` builds its groups; `guard` throws when the options are frozen. */
  constructor(guard: MutationGuard) {
    this.#guard = guard;
  }

  /**
   * The type of the partial results of matrix multiplications and convolutions:
   * `'float'` (default) or `'half'` (less memory, less precision). Stored and
   * reported; has no effect on the simulated engine yet.
   */
  setPartialsType(dtype: PartialsType): this {
    const where = this.#check('setPartialsType');
    return this.#set({ partialsType: checkArgument(partialsRule, dtype, where) });
  }

  /**
   * Rounds float16 results up or down at random, so that the expected value is
   * exact. Stored and reported; has no effect on the simulated engine yet.
   */
  enableStochasticRounding(enabled: boolean): this {
    const where = this.#check('enableStochasticRounding');
    return this.#set({ stochasticRounding: checkArgument(flag, enabled, where) });
  }

  /**
   * Raises an error on invalid operations, division by zero and overflow.
   * Stored and reported; has no effect on the simulated engine yet.
   */
  enableFloatingPointExceptions(enabled: boolean): this {
    const where = this.#check('enableFloatingPointExceptions');
    return this.#set({ floatingPointExceptions: checkArgument(flag, enabled, where) });
  }

  /**
   * How operations mixing float16 and float32 inputs are cast:
   * `HalfUpcastToFloat` (default, as tfjs and PyTorch) or `FloatDowncastToHalf`
   * (PopTorch 2's default). Stored and reported; has no effect on the simulated
   * engine yet.
   */
  halfFloatCasting(halfFloatCasting: HalfFloatCastingBehavior): this {
    const where = this.#check('halfFloatCasting');
    return this.#set({ halfFloatCasting: checkArgument(castingRule, halfFloatCasting, where) });
  }

  /**
   * Keeps the running mean and variance of batch normalisation in float32
   * whatever the input type (default true). Stored and reported; has no effect
   * on the simulated engine yet.
   */
  runningStatisticsAlwaysFloat(value: boolean): this {
    const where = this.#check('runningStatisticsAlwaysFloat');
    return this.#set({ runningStatisticsAlwaysFloat: checkArgument(flag, value, where) });
  }

  /** A copy of the current values. */
  get settings(): PrecisionSettings {
    return { ...this.#values };
  }

  /** @internal Replaces every value; `Options` uses it to copy options. */
  restore(values: PrecisionSettings): void {
    this.#values = { ...values };
  }

  #check(method: string): string {
    const where = `Options.Precision.${method}`;
    this.#guard(where);
    return where;
  }

  #set(change: Partial<PrecisionSettings>): this {
    this.#values = { ...this.#values, ...change };
    return this;
  }
}
