/**
 * Splitting a model's layers into consecutive pipeline stages of nearly
 * equal time, from the simulated cost of each layer's kernels (forward and
 * backward) in a compiled executable: what `poptfjs plan --ipus N` does for
 * a saved model that has no Block annotations.
 */
import { PoptfjsError } from '../common/errors.js';
import { layerCosts } from '../report/layer_costs.js';
import type { Executable } from '../executable/executable.js';

/** Simulated cycles of each layer's kernels (forward and backward, one micro-batch) on one IPU of the executable's target. */
export function layerCycles(executable: Executable): Map<string, number> {
  const cycles = new Map<string, number>();
  for (const l of layerCosts(executable)) cycles.set(l.name, (cycles.get(l.name) ?? 0) + l.forwardCycles + l.backwardCycles);
  return cycles;
}

/**
 * `layers` (in model order) split into `groups` consecutive groups whose
 * largest total of `cost` is as small as it can be (the linear partition
 * problem, solved exactly).
 */
export function balancedGroups<T>(layers: readonly T[], cost: (layer: T) => number, groups: number): T[][] {
  if (!Number.isInteger(groups) || groups < 1) throw new PoptfjsError(`cannot split layers into ${groups} groups; expected a positive integer`, { type: 'placement' });
  if (layers.length < groups) {
    throw new PoptfjsError(`the model has ${layers.length} layer(s), too few to split over ${groups} IPUs; use ${layers.length} IPU(s) or fewer`, { type: 'placement' });
  }
  const n = layers.length;
  const prefix = [0];
  for (const layer of layers) prefix.push(prefix[prefix.length - 1]! + cost(layer));
  const span = (from: number, to: number) => prefix[to]! - prefix[from]!;
  // best[g][i]: the least largest group cost of the first i layers in g groups; cut[g][i]: where the last group starts.
  const best: number[][] = Array.from({ length: groups + 1 }, () => new Array<number>(n + 1).fill(Infinity));
  const cut: number[][] = Array.from({ length: groups + 1 }, () => new Array<number>(n + 1).fill(0));
  best[0]![0] = 0;
  for (let g = 1; g <= groups; g++) {
    for (let i = g; i <= n; i++) {
      for (let j = g - 1; j < i; j++) {
        const candidate = Math.max(best[g - 1]![j]!, span(j, i));
        if (candidate < best[g]![i]!) {
          best[g]![i] = candidate;
          cut[g]![i] = j;
        }
      }
    }
  }
  const result: T[][] = [];
  for (let g = groups, i = n; g > 0; g--) {
    const j = cut[g]![i]!;
    result.unshift(layers.slice(j, i));
    i = j;
  }
  return result;
}
