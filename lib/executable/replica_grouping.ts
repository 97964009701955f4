/**
 * Replica groups, as PopTorch's `CommGroupType`: which replicas share a value
 * (a weight split across groups, or the same input data).
 *
 * - `Consecutive`: groups of `size` neighbours, `[0,1], [2,3], ...`;
 * - `Orthogonal`: groups across the consecutive ones, `[0,4], [1,5], ...` for 8 replicas in groups of 2;
 * - `All`: one group of every replica;
 * - `NoGrouping`: each replica on its own.
 */
import { PoptfjsError } from '../common/errors.js';
import type { CommGroupType, VariableRetrievalMode } from '../option_vocabulary/enums.js';

/** How one weight is grouped across replicas (`executor.parameter(name).replicaGrouping(...)`). */
export interface ReplicaGrouping {
  readonly type: CommGroupType;
  /** Replicas per group. */
  readonly groupSize: number;
  /** What `copyWeightsToHost` returns: one value per group, or one per replica. */
  readonly retrieval: VariableRetrievalMode;
}

/** The replica groups of `replicas` replicas grouped by `type` in groups of `size`. */
export function replicaGroups(type: CommGroupType, size: number, replicas: number): number[][] {
  if (type === 'All') return [Array.from({ length: replicas }, (_, r) => r)];
  if (type === 'NoGrouping') return Array.from({ length: replicas }, (_, r) => [r]);
  if (!Number.isInteger(size) || size < 1 || replicas % size !== 0) {
    throw new PoptfjsError(`replica groups of ${size} do not divide ${replicas} replica(s)`, { type: 'replication' });
  }
  const count = replicas / size;
  return Array.from({ length: count }, (_, k) => Array.from({ length: size }, (_, i) => (type === 'Orthogonal' ? k + i * count : k * size + i)));
}

/** The group index of each replica. */
export function groupOfReplica(groups: readonly (readonly number[])[], replicas: number): number[] {
  const of = new Array<number>(replicas);
  groups.forEach((members, k) => members.forEach((r) => (of[r] = k)));
  return of;
}
