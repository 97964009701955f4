/**
 * The device copies of the weights, one set per replica. Replicas share the
 * data of a weight (copy-on-write clones) unless the weight is split across
 * replica groups, in which case each group holds its own slice, or unless it
 * is a buffer the replicas update on their own.
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../common/errors.js';
import { groupOfReplica, replicaGroups, type ReplicaGrouping } from '../executable/replica_grouping.js';

/** The weights of every replica. */
export class ReplicaWeights {
  private readonly perReplica: Map<string, tf.Tensor>[];
  private readonly groupsOf = new Map<string, number[][]>();
  /** How many times each replica's weights were set. */
  private readonly versions: number[];

  constructor(
    readonly replicas: number,
    private readonly groupings: Readonly<Record<string, ReplicaGrouping>>,
  ) {
    this.perReplica = Array.from({ length: replicas }, () => new Map());
    this.versions = new Array<number>(replicas).fill(0);
  }

  /** A number that changes whenever a weight of `replica` is set: values made from its weights are stale when it has moved. */
  version(replica: number): number {
    return this.versions[replica]!;
  }

  /** The replica groups sharing each value of `name` (all replicas in one group unless it is grouped). */
  groups(name: string): number[][] {
    let groups = this.groupsOf.get(name);
    if (!groups) {
      const g = this.groupings[name];
      groups = g ? replicaGroups(g.type, g.groupSize, this.replicas) : [Array.from({ length: this.replicas }, (_, r) => r)];
      this.groupsOf.set(name, groups);
    }
    return groups;
  }

  /** The weights replica `replica` computes with. */
  of(replica: number): ReadonlyMap<string, tf.Tensor> {
    return this.perReplica[replica]!;
  }

  /** Sets the value of `name` on one replica (the tensor is owned from now on). */
  set(name: string, replica: number, value: tf.Tensor): void {
    const map = this.perReplica[replica]!;
    const old = map.get(name);
    map.set(name, value);
    this.versions[replica]!++;
    if (old && old !== value) old.dispose();
  }

  /** Sets the value of `name` on every replica of a group (each gets a copy-on-write clone). */
  setGroup(name: string, members: readonly number[], value: tf.Tensor): void {
    members.forEach((r, i) => this.set(name, r, i === members.length - 1 ? value : tf.clone(value)));
  }

  /** Loads a host value: whole on every replica, or split along its first dimension across the groups. */
  load(name: string, host: tf.Tensor): void {
    const grouping = this.groupings[name];
    const groups = this.groups(name);
    if (!grouping) {
      this.setGroup(name, groups[0]!, tf.keep(tf.clone(host)));
      return;
    }
    const expected = grouping.retrieval === 'AllReplicas' ? this.replicas : groups.length;
    if (host.shape[0] !== expected) {
      throw new PoptfjsError(
        `parameter '${name}' has ${host.shape[0]} slice(s) along its first dimension, but replicaGrouping(${grouping.type}, ${grouping.groupSize}, ${grouping.retrieval}) ` +
          `over ${this.replicas} replicas needs ${expected} (${grouping.retrieval === 'AllReplicas' ? 'one per replica' : 'one per group'})`,
        { type: 'replication', location: name },
      );
    }
    groups.forEach((members, k) => {
      const index = grouping.retrieval === 'AllReplicas' ? members[0]! : k;
      this.setGroup(name, members, tf.keep(tf.tidy(() => tf.squeeze(tf.slice(host, [index], [1]), [0]))));
    });
  }

  /** The host value of `name`: replica 0's, or the groups' (or replicas') slices stacked along a first dimension. */
  hostValue(name: string): tf.Tensor {
    const grouping = this.groupings[name];
    if (!grouping) return tf.clone(this.perReplica[0]!.get(name)!);
    const order = grouping.retrieval === 'AllReplicas' ? this.perReplica.map((_, r) => r) : this.groups(name).map((members) => members[0]!);
    return tf.stack(order.map((r) => this.perReplica[r]!.get(name)!));
  }

  /** Names of the weights held. */
  names(): string[] {
    return [...this.perReplica[0]!.keys()];
  }

  /** The group index of each replica for `name`. */
  groupIndex(name: string): number[] {
    return groupOfReplica(this.groups(name), this.replicas);
  }

  /** Frees every copy. */
  dispose(): void {
    for (const map of this.perReplica) {
      tf.dispose([...map.values()]);
      map.clear();
    }
  }
}
