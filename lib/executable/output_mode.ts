/**
 * What a call returns of each output over its micro-steps (PopTorch's
 * `OutputMode`, with `Default` resolved): every micro-step's (`All`), the
 * last (`Final`), their sum (`Sum`) or every N-th device iteration's
 * (`EveryN`).
 */
import type { BatchFactors } from './batch_plan.js';

/** An output mode with `Default` already resolved. */
export type ResolvedOutputMode = 'All' | 'Final' | 'Sum' | 'EveryN';

/** How many micro-steps' outputs one replica sends back to the host per call in `mode`. */
export function returnedMicroSteps(mode: ResolvedOutputMode, period: number, factors: BatchFactors): number {
  switch (mode) {
    case 'All':
      return factors.deviceIterations * factors.gradientAccumulation;
    case 'EveryN':
      return Math.floor(factors.deviceIterations / period) * factors.gradientAccumulation;
    case 'Final':
    case 'Sum':
      return 1;
  }
}
