/**
 * What `autoPlan()` may choose, and the defaults of each choice: IPUs per
 * replica (the rest replicate the model), micro-batch size (the global
 * batch fixes the gradient accumulation), device iterations, recomputation,
 * where the optimizer state lives, and the available-memory proportions.
 */
import { PoptfjsError } from '../common/errors.js';
import { RecomputationType } from '../strategy/recomputation.js';

/** Where the optimizer state lives: on chip or in streaming memory, whole on each replica or sharded over them. */
export const OptimizerStatePlace = {
  OnChip: 'on chip',
  OnChipSharded: 'on chip, sharded',
  OffChip: 'off chip',
  OffChipSharded: 'off chip, sharded',
} as const;
/** A member of {@link OptimizerStatePlace}. */
export type OptimizerStatePlace = (typeof OptimizerStatePlace)[keyof typeof OptimizerStatePlace];

/** The choices `autoPlan()` explores; each absent one takes its default. */
export interface SearchSpace {
  /** IPUs a replica's pipeline runs over (default: each power of two that divides `ipus`, up to the model's units). */
  readonly ipusPerReplica?: readonly number[];
  /** Micro-batch sizes (default: every divisor of the global batch; a replication keeps those that divide its share). */
  readonly microBatch?: readonly number[];
  /** Device iterations (default 1, 4 and 16). */
  readonly deviceIterations?: readonly number[];
  /** Recomputation (training; default None, Standard, and Pipeline when pipelined or RecomputeAll on one IPU). */
  readonly recomputation?: readonly RecomputationType[];
  /** Where the optimizer state lives (training; default all four places, the sharded ones with replicas only). */
  readonly optimizerState?: readonly OptimizerStatePlace[];
  /** Available-memory proportions, chosen per IPU (default 0.1, 0.2, 0.3, 0.45, 0.6 and 0.8). */
  readonly availableMemoryProportion?: readonly number[];
}

/** The default available-memory proportions. */
export const DEFAULT_PROPORTIONS = [0.1, 0.2, 0.3, 0.45, 0.6, 0.8] as const;

/** The default device iterations. */
export const DEFAULT_DEVICE_ITERATIONS = [1, 4, 16] as const;

/** The space with every choice decided for one problem. */
export interface ResolvedSpace {
  readonly ipusPerReplica: readonly number[];
  /** Micro-batch sizes, ascending; those a given replication allows are filtered by the global batch. */
  readonly microBatch: readonly number[];
  readonly deviceIterations: readonly number[];
  /** Recomputation types, most memory first (fastest first). */
  readonly recomputation: (pipelined: boolean) => readonly RecomputationType[];
  /** Places of the optimizer state, most memory first (fastest first). */
  readonly optimizerState: (replicas: number) => readonly OptimizerStatePlace[];
  /** Proportions, ascending. */
  readonly availableMemoryProportion: readonly number[];
}

function spaceError(message: string): PoptfjsError {
  return new PoptfjsError(`autoPlan: ${message}`, { type: 'options' });
}

function positiveIntegers(values: readonly number[] | undefined, what: string): readonly number[] | undefined {
  if (values === undefined) return undefined;
  if (!Array.isArray(values) || values.length === 0 || !values.every((v) => Number.isInteger(v) && v > 0)) {
    throw spaceError(`space.${what} must be a non-empty list of positive integers, got ${JSON.stringify(values)}`);
  }
  return [...new Set(values)].sort((a, b) => a - b);
}

/** The divisors of `n`, ascending. */
export function divisors(n: number): number[] {
  const small: number[] = [];
  const large: number[] = [];
  for (let d = 1; d * d <= n; d++) {
    if (n % d !== 0) continue;
    small.push(d);
    if (d * d !== n) large.unshift(n / d);
  }
  return [...small, ...large];
}

const FAST_TO_SAVING_STATE: readonly OptimizerStatePlace[] = [
  OptimizerStatePlace.OnChip,
  OptimizerStatePlace.OnChipSharded,
  OptimizerStatePlace.OffChip,
  OptimizerStatePlace.OffChipSharded,
];

/** The search space of a problem with `ipus` IPUs, `globalBatch` and `units` units to split. */
// biome-ignore lint/complexity/noExcessiveCognitiveComplexity: one check per dimension of the search space, each naming what was wrong
export function resolveSpace(space: SearchSpace = {}, ipus: number, globalBatch: number, units: number, training: boolean): ResolvedSpace {
  if (space === null || typeof space !== 'object') throw spaceError(`space must be an object, got ${JSON.stringify(space)}`);
  const known = ['ipusPerReplica', 'microBatch', 'deviceIterations', 'recomputation', 'optimizerState', 'availableMemoryProportion'];
  const unknown = Object.keys(space).filter((k) => !known.includes(k));
  if (unknown.length > 0) throw spaceError(`unknown space key(s) ${unknown.join(', ')}; the space has ${known.join(', ')}`);
  const ipusPerReplica = positiveIntegers(space.ipusPerReplica, 'ipusPerReplica') ?? [];
  for (const k of ipusPerReplica) {
    if (ipus % k !== 0) throw spaceError(`space.ipusPerReplica has ${k}, which does not divide the ${ipus} IPUs`);
    if (k > units) throw spaceError(`space.ipusPerReplica has ${k}, but the model has ${units} unit(s) to split (blocks, or layers when it has no blocks)`);
  }
  const defaultK: number[] = [];
  for (let k = 1; k <= Math.min(ipus, units); k *= 2) if (ipus % k === 0) defaultK.push(k);
  const microBatch = positiveIntegers(space.microBatch, 'microBatch') ?? divisors(globalBatch);
  const deviceIterations = positiveIntegers(space.deviceIterations, 'deviceIterations') ?? DEFAULT_DEVICE_ITERATIONS;
  const types = Object.values(RecomputationType);
  if (space.recomputation !== undefined) {
    if (!training) throw spaceError('space.recomputation is for training; an inference plan recomputes nothing');
    if (!Array.isArray(space.recomputation) || space.recomputation.length === 0 || !space.recomputation.every((r) => types.includes(r))) {
      throw spaceError(`space.recomputation must be a non-empty list of ${types.join(', ')}, got ${JSON.stringify(space.recomputation)}`);
    }
  }
  const places = Object.values(OptimizerStatePlace);
  if (space.optimizerState !== undefined) {
    if (!training) throw spaceError('space.optimizerState is for training; an inference plan has no optimizer state');
    if (!Array.isArray(space.optimizerState) || space.optimizerState.length === 0 || !space.optimizerState.every((p) => places.includes(p))) {
      throw spaceError(`space.optimizerState must be a non-empty list of ${places.map((p) => `'${p}'`).join(', ')}, got ${JSON.stringify(space.optimizerState)}`);
    }
  }
  const proportions = space.availableMemoryProportion;
  if (proportions !== undefined && (!Array.isArray(proportions) || proportions.length === 0 || !proportions.every((p) => typeof p === 'number' && p > 0 && p <= 1))) {
    throw spaceError(`space.availableMemoryProportion must be a non-empty list of numbers in (0, 1], got ${JSON.stringify(proportions)}`);
  }
  const order = ['None', 'NormOnly', 'Standard', 'Pipeline', 'RecomputeAll'];
  return {
    ipusPerReplica: ipusPerReplica.length > 0 ? ipusPerReplica : defaultK,
    microBatch,
    deviceIterations,
    recomputation: (pipelined) => {
      if (!training) return ['None'];
      const chosen = space.recomputation ?? ['None', 'Standard', pipelined ? 'Pipeline' : 'RecomputeAll'];
      return [...new Set(chosen)].sort((a, b) => order.indexOf(a) - order.indexOf(b));
    },
    optimizerState: (replicas) => {
      if (!training) return [OptimizerStatePlace.OnChip];
      const chosen = space.optimizerState ?? FAST_TO_SAVING_STATE.filter((p) => replicas > 1 || !p.endsWith('sharded'));
      return FAST_TO_SAVING_STATE.filter((p) => chosen.includes(p));
    },
    availableMemoryProportion: [...new Set(proportions ?? DEFAULT_PROPORTIONS)].sort((a, b) => a - b),
  };
}
