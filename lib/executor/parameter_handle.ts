/**
 * `executor.parameter(name)`: settings of one weight of a wrapped model, as
 * PopTorch's per-parameter methods (`model.W.replicaGrouping(...)`).
 */
import { PoptfjsError } from '../common/errors.js';
import { CommGroupType, VariableRetrievalMode } from '../option_vocabulary/enums.js';
import type { ReplicaGrouping } from '../executable/replica_grouping.js';

/** A weight of a wrapped model, by its tf.Variable name. */
export class ParameterHandle {
  /** @internal Use `executor.parameter(name)`. */
  constructor(
    readonly name: string,
    private readonly setGrouping: (grouping: ReplicaGrouping) => void,
  ) {}

  /**
   * Splits this weight across replica groups: each group of `groupSize`
   * replicas (arranged by `type`) holds its own slice, the host tensor
   * holding the slices along its first dimension. `retrieval` says what
   * `copyWeightsToHost` writes back: one slice per group (`OnePerGroup`) or
   * one per replica (`AllReplicas`). Set it before the model is compiled.
   */
  replicaGrouping(type: CommGroupType, groupSize: number, retrieval: VariableRetrievalMode = VariableRetrievalMode.OnePerGroup): this {
    if (!Object.values(CommGroupType).includes(type)) {
      throw new PoptfjsError(`replicaGrouping: unknown CommGroupType '${String(type)}'; expected one of ${Object.values(CommGroupType).join(', ')}`, { type: 'replication' });
    }
    if (!Number.isInteger(groupSize) || groupSize < 1) {
      throw new PoptfjsError(`replicaGrouping: the group size must be a positive integer, got ${String(groupSize)}`, { type: 'replication' });
    }
    if (!Object.values(VariableRetrievalMode).includes(retrieval)) {
      throw new PoptfjsError(`replicaGrouping: unknown VariableRetrievalMode '${String(retrieval)}'; expected one of ${Object.values(VariableRetrievalMode).join(', ')}`, {
        type: 'replication',
      });
    }
    this.setGrouping({ type, groupSize, retrieval });
    return this;
  }
}
