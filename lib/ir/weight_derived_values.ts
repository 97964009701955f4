/**
 * Values made from weights and constants only (a transposed weight, a cast
 * constant): the device makes them once per step, not once per micro-batch.
 */
import { rootValues, type Graph, type Node, type NodeId, type ValueId } from './graph.js';

/** What may count as weight-derived besides the graph's own rules. */
export interface WeightDerivedRules {
  /** Parameters whose values change during a step (buffers the graph writes): values made from them are not weight-derived. */
  readonly changing?: ReadonlySet<string>;
  /** False for a node whose outputs must be made by every run (e.g. one that draws random numbers). */
  readonly computable?: (node: Node) => boolean;
}

/** For each value id, whether it depends on weights and constants only. */
export function weightDerivedValues(graph: Graph, rules: WeightDerivedRules = {}): boolean[] {
  const perStep = new Array<boolean>(graph.values.length).fill(false);
  for (const v of graph.values) {
    if (v.source.kind === 'constant' || (v.source.kind === 'param' && !rules.changing?.has(v.source.name))) perStep[v.id] = true;
  }
  for (const node of graph.nodes) {
    const fromWeights = !node.kernel.startsWith('poptfjs.') && node.inputs.length > 0 && node.inputs.every((id) => perStep[id]) && (rules.computable?.(node) ?? true);
    for (const id of node.outputs) perStep[id] = fromWeights;
  }
  return perStep;
}

/** The nodes whose outputs can all be made ahead from the weights, and which of those outputs to keep. */
export interface WeightDerivedNodes {
  /** The nodes, in graph order. */
  readonly nodes: readonly NodeId[];
  /** Their outputs that the other nodes read or that the graph hands back. */
  readonly kept: readonly ValueId[];
}

/**
 * The nodes a run can skip when their outputs are made ahead, once per
 * change of the weights: those of nodes without bodies whose outputs are
 * all weight-derived, parameters written during a step counting as inputs.
 */
export function weightDerivedNodes(graph: Graph, computable: (node: Node) => boolean = () => true): WeightDerivedNodes {
  const derived = weightDerivedValues(graph, { changing: new Set(graph.assignments.map((a) => a.param)), computable: (node) => !node.bodies && computable(node) });
  const ahead = graph.nodes.filter((node) => node.outputs.length > 0 && node.outputs.every((id) => derived[id]));
  const aheadSet = new Set(ahead.map((node) => node.id));
  const read = new Set<ValueId>(rootValues(graph));
  for (const node of graph.nodes) if (!aheadSet.has(node.id)) for (const id of node.inputs) read.add(id);
  return { nodes: ahead.map((node) => node.id), kept: ahead.flatMap((node) => node.outputs.filter((id) => read.has(id))) };
}
