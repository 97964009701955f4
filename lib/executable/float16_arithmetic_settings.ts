/**
 * The float16 arithmetic an executable is compiled for (PopTorch's
 * `opts.Precision`): rounding, partials, casting and floating-point
 * exceptions, and the arithmetic of a device without any option set.
 */
import { HalfFloatCastingBehavior } from '../option_vocabulary/enums.js';

/** The numerical behaviour of float16 (and floating-point exception) handling on the device. */
export interface Float16Arithmetic {
  /** Round float16 results stochastically instead of to nearest even. */
  readonly stochasticRounding: boolean;
  /** Raise when a node produces Inf or NaN from finite inputs. */
  readonly floatingPointExceptions: boolean;
  /** Keep the partial sums of float16 matmuls and convolutions in float16. */
  readonly halfPartials: boolean;
  /** How ops mixing float16 and float32 inputs compute (the graph's flags already follow it). */
  readonly halfFloatCasting: HalfFloatCastingBehavior;
}

/** The arithmetic of a device without any option set: round to nearest even, float32 partials, no exceptions. */
export const DEFAULT_FLOAT16_ARITHMETIC: Float16Arithmetic = Object.freeze({
  stochasticRounding: false,
  floatingPointExceptions: false,
  halfPartials: false,
  halfFloatCasting: HalfFloatCastingBehavior.HalfUpcastToFloat,
});
