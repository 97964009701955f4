/**
 * The values a loaded executable makes from its weights and constants alone
 * (a convolution kernel laid out channels-last, a cast or folded weight, a
 * constant subgraph), computed once per replica and reused by every run
 * until that replica's weights change (a load from the host, an optimizer
 * step, a device state import).
 *
 * Runs then see the same weight tensors from one call to the next, so the
 * backend's per-operator caches (the wasm backend keeps its packed
 * convolution and matrix-product operators per filter tensor) stay alive.
 * Values made from buffers the graph writes during a step are made by every
 * run, as are those of nodes that draw random numbers (float16 stochastic
 * rounding).
 */
import type * as tf from '@tensorflow/tfjs';
import type { Graph, Node, NodeId, ValueId } from '../ir/graph.js';
import { weightDerivedNodes } from '../ir/weight_derived_values.js';
import type { GraphInterpreter } from './graph_interpreter.js';
import type { RandomSource } from '../executable/random_source.js';
import type { ReplicaWeights } from './replica_weights.js';

/** One replica's computed values and the weights version they were made from. */
interface ReplicaValues {
  readonly version: number;
  readonly values: Map<ValueId, tf.Tensor>;
}

/** The weight-derived values of one executable, per replica. */
export class WeightDerivedCache {
  /** The nodes computed ahead, in graph order. */
  readonly nodes: readonly NodeId[];
  /** The same nodes, which a run skips (those whose outputs only other such nodes read too). */
  readonly ahead: ReadonlySet<NodeId>;
  /** Their outputs that the other nodes read or that the graph hands back. */
  private readonly wanted: readonly ValueId[];
  private readonly replicas = new Map<number, ReplicaValues>();

  /**
   * @param computable false for a node that must run each time (one whose
   *   float16 rounding draws random numbers).
   */
  constructor(
    graph: Graph,
    private readonly interpreter: GraphInterpreter,
    private readonly weights: ReplicaWeights,
    computable: (node: Node) => boolean,
  ) {
    const { nodes, kept } = weightDerivedNodes(graph, computable);
    this.nodes = nodes;
    this.ahead = new Set(nodes);
    this.wanted = kept;
  }

  /** The values of `replica`, computed now if its weights changed since they were last made. */
  values(replica: number, random: RandomSource): ReadonlyMap<ValueId, tf.Tensor> | undefined {
    if (this.nodes.length === 0) return undefined;
    const version = this.weights.version(replica);
    const held = this.replicas.get(replica);
    if (held?.version === version) return held.values;
    this.release(replica);
    const values = this.interpreter.computeValues(this.nodes, this.weights.of(replica), random, this.wanted);
    this.replicas.set(replica, { version, values });
    return values;
  }

  private release(replica: number): void {
    const held = this.replicas.get(replica);
    if (!held) return;
    for (const t of held.values.values()) t.dispose();
    this.replicas.delete(replica);
  }

  /** Frees every computed value. */
  dispose(): void {
    for (const replica of [...this.replicas.keys()]) this.release(replica);
  }
}
