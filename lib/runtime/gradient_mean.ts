/**
 * The divisor of a Mean gradient reduction, as PopTorch's: the mean is taken
 * over every replica (the replication factor) and every accumulated
 * micro-batch, even for a weight split across replica groups, whose gradient
 * is summed over its group's replicas only. A group of 2 among 8 replicas thus
 * divides its summed gradient by 8 × accumulation, not by 2 × accumulation —
 * the weight's slice moves as the same slice of a whole weight trained on the
 * whole batch would. In a run of several instances, the total replication
 * factor is the instances' replicas together: a gradient summed over the
 * instances is divided by their number too.
 */
import type { GradientReduction } from '../executable/executable.js';

/**
 * What one group's accumulated gradient is divided by (loss scaling aside):
 * `count` micro-batches were accumulated from the group's `members` replicas
 * out of `replicas`, on each of `instances` instances (their sums added). A
 * `Post` mean holds the plain sum, a `Running` mean already the mean over
 * `count` (on each instance), and a `Sum` reduction divides by nothing.
 */
export function meanDivisor(reduction: GradientReduction, count: number, members: number, replicas: number, instances = 1): number {
  if (reduction.type === 'Sum') return 1;
  const groups = replicas / members;
  return (reduction.strategy === 'Post' ? count * groups : groups) * instances;
}
