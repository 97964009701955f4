/**
 * `opts.Precision`: options about float16 and numerical behaviour (PopTorch's
 * `_PrecisionOptions`).
 */
import { z } from 'zod';
import { type ArgumentRule, checkArgument, enumRule, flag } from '../option_vocabulary/argument_rules.js';
import { HalfFloatCastingBehavior, PartialsType } from '../option_vocabulary/enums.js';
import type { MutationGuard } from '../option_vocabulary/frozen_options.js';

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
 * Every setter returns the group. They are compiled into the executable: the
 * simulated device computes float16 values (see `half`) as they say.
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
   * `'float'` (default) or `'half'` (less memory, less precision). With
   * `'half'`, matmuls and convolutions of float16 inputs keep their running
   * sum over the contracted dimension in float16 (rounded after each element
   * of a matmul's inner dimension, each input channel of a convolution);
   * float32 ones are not affected.
   */
  setPartialsType(dtype: PartialsType): this {
    const where = this.#check('setPartialsType');
    return this.#set({ partialsType: checkArgument(partialsRule, dtype, where) });
  }

  /**
   * Rounds float16 results (op outputs, float16 weight updates, float16
   * optimizer state and accumulators) up or down at random, so that the
   * expected value is exact, instead of to nearest even. The random bits come
   * from the device's generator, so runs are reproducible under `randomSeed`.
   */
  enableStochasticRounding(enabled: boolean): this {
    const where = this.#check('enableStochasticRounding');
    return this.#set({ stochasticRounding: checkArgument(flag, enabled, where) });
  }

  /**
   * Raises an error (type `floating_point_exception`, naming the kernel and
   * layer) when an op produces NaN (invalid operation) or Inf (overflow,
   * including float16 results beyond ±65504, or division by zero) from
   * inputs that hold none, and when a comparison has a NaN operand.
   */
  enableFloatingPointExceptions(enabled: boolean): this {
    const where = this.#check('enableFloatingPointExceptions');
    return this.#set({ floatingPointExceptions: checkArgument(flag, enabled, where) });
  }

  /**
   * How operations mixing float16 and float32 inputs are cast:
   * `HalfUpcastToFloat` (default, as PyTorch: the op computes in float32 and
   * its result is float32) or `FloatDowncastToHalf` (PopTorch 2's default:
   * the float32 inputs are rounded to float16 and the result is float16).
   * Scalars (single-element constants, the loss scale) never decide, and
   * float32 weights meeting float16 values are converted to float16 either
   * way, as PopTorch converts float32 parameters used with a float16 input.
   */
  halfFloatCasting(halfFloatCasting: HalfFloatCastingBehavior): this {
    const where = this.#check('halfFloatCasting');
    return this.#set({ halfFloatCasting: checkArgument(castingRule, halfFloatCasting, where) });
  }

  /**
   * Keeps the running mean and variance of batch normalisation in float32
   * whatever the input type (default true): the buffers a model updates stay
   * float32 even when `half` made the model float16.
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
