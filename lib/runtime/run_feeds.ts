/** What a run of a graph is fed from outside it, and how one node is run with those feeds. */
import type * as tf from '@tensorflow/tfjs';
import type { NodeId, ValueId } from '../ir/graph.js';
import type { RandomSource } from '../executable/random_source.js';

/** The tensors a run needs from outside the graph. */
export interface RunFeeds {
  /** One tensor per graph input, in order. */
  inputs: readonly tf.Tensor[];
  /** Parameter tensors by name. */
  params: ReadonlyMap<string, tf.Tensor>;
  /** The generator for random pseudo-kernels. */
  random: RandomSource;
  /**
   * Values computed ahead of the run (those made from weights alone, see
   * `GraphInterpreter.computeValues`), by value id: the nodes that
   * make them are skipped.
   */
  derived?: ReadonlyMap<ValueId, tf.Tensor>;
  /**
   * The nodes that made the `derived` values, including those whose outputs
   * only other such nodes read: the run skips them all.
   */
  ahead?: ReadonlySet<NodeId>;
}

/** How one node is run: its input tensors and the run's feeds give its outputs. */
export type NodeRun = (inputs: tf.Tensor[], feeds: RunFeeds) => tf.Tensor[];
