/**
 * Automatic loss scaling (`opts.Training.setAutomaticLossScaling(true)`),
 * with PopART's update rule and the skip of updates that overflowed.
 *
 * After each step's gradients are reduced, the loss-scaled gradients are
 * sorted into two bins at an edge of 1/16 of the largest value of their
 * format (float16: 4094; float32: about 2.1e37), as PopART's histogram does:
 * - a gradient element is Inf or NaN: the step overflowed; its update is
 *   skipped (weights and optimizer state stay as they were) and the scale halves;
 * - more than a proportion 1e-7 of the elements are in the upper bin: the
 *   gradients are close to overflowing; the scale halves (the update is applied);
 * - otherwise the scale doubles: the gradients use more of the format's range.
 * The scale stays within [2^-24, 2^24]. It starts from the optimizer's
 * `lossScaling` (default 1).
 */
import { FLOAT16_MAX } from '../lib/precision/float16.js';

/** Where the bin edge lies, as a proportion of the format's largest value (PopART's `binEdgeLocation`). */
export const BIN_EDGE_LOCATION = 1 / 16;
/** The proportion of upper-bin elements above which the scale halves (PopART's `thresholdUpperCountProportion`). */
export const UPPER_COUNT_THRESHOLD = 1e-7;
/** The smallest loss scale. */
export const MIN_LOSS_SCALE = 2 ** -24;
/** The largest loss scale. */
export const MAX_LOSS_SCALE = 2 ** 24;

const FLOAT32_MAX = 3.4028234663852886e38;

/** What the update rule reads from the loss-scaled gradients of one step. */
export interface GradientStatistics {
  /** Elements looked at. */
  readonly elements: number;
  /** Elements in the upper bin (non-finite ones included). */
  readonly upper: number;
  /** True if some element is Inf or NaN. */
  readonly overflow: boolean;
}

/** The statistics of one gradient tensor's values; `half` if it is held in float16. */
export function gradientStatistics(values: Float32Array, half: boolean): GradientStatistics {
  const edge = BIN_EDGE_LOCATION * (half ? FLOAT16_MAX : FLOAT32_MAX);
  let upper = 0;
  let overflow = false;
  for (const x of values) {
    if (!Number.isFinite(x)) {
      overflow = true;
      upper++;
    } else if (Math.abs(x) >= edge) {
      upper++;
    }
  }
  return { elements: values.length, upper, overflow };
}

/** The statistics of several tensors together. */
export function combineStatistics(all: readonly GradientStatistics[]): GradientStatistics {
  return {
    elements: all.reduce((n, s) => n + s.elements, 0),
    upper: all.reduce((n, s) => n + s.upper, 0),
    overflow: all.some((s) => s.overflow),
  };
}

/** The loss scale after a step with `statistics`, and whether that step's update is skipped. */
export function nextLossScale(scale: number, statistics: GradientStatistics): { scale: number; skip: boolean } {
  const tooHigh = statistics.overflow || statistics.upper > UPPER_COUNT_THRESHOLD * statistics.elements;
  const next = Math.min(MAX_LOSS_SCALE, Math.max(MIN_LOSS_SCALE, tooHigh ? scale / 2 : scale * 2));
  return { scale: next, skip: statistics.overflow };
}
