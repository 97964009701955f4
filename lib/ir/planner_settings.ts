/**
 * The settings a matrix product or convolution gives its planner
 * (`ops.setAvailableMemory`, `ops.MultiConv`): its own, or, for a backward
 * product, those of the forward node it differentiates, as PopART's gradient
 * ops take their forward op's.
 */
import type { Graph, Node, NodeAnnotations } from './graph.js';

function ownOrForward<K extends 'availableMemoryProportion' | 'partialsType'>(graph: Graph, node: Node, key: K): NodeAnnotations[K] {
  const own = node.annotations[key];
  const { gradOf } = node.annotations;
  return own ?? (gradOf !== undefined ? graph.nodes[gradOf]?.annotations[key] : undefined);
}

/** The proportion of a tile's memory the product may use for temporaries; undefined when none was set (the IPU's applies). */
export function availableMemoryProportionOf(graph: Graph, node: Node): number | undefined {
  return ownOrForward(graph, node, 'availableMemoryProportion');
}

/** The type of the product's partial sums; undefined when none was set (the model's `Precision.setPartialsType` applies). */
export function partialsTypeOf(graph: Graph, node: Node): 'float' | 'half' | undefined {
  return ownOrForward(graph, node, 'partialsType');
}
