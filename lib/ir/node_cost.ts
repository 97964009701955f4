/**
 * FLOPs and bytes of each IR node, the inputs of the cost model.
 *
 * FLOPs are each kernel's record's count (lib/backend/kernel_catalogue:
 * matrix products and convolutions two per multiply-accumulate, element-wise
 * kernels one per output element, reductions one per input element); bytes are
 * what the node reads and writes. Counts depend only on shapes, so they are
 * exact for a static graph.
 */
import { kernelRecord } from '../backend/kernel_catalogue/kernel_catalogue.js';
import { sizeOf, valueElementBytes, type Graph, type Node, type Value, type ValueId } from './graph.js';
import { kernelNode } from './kernel_node.js';
import { isViewNode } from './value_views.js';

/** The work of one node. */
export interface NodeCost {
  readonly flops: number;
  /** Bytes read (inputs) plus bytes written (outputs). */
  readonly bytes: number;
}

function graphValue(graph: Graph, id: number): Value {
  return graph.values[id]!;
}

/**
 * The FLOPs of one node, by its kernel's record in the kernel catalogue. A
 * loop counts its body's `count` times; a cond its larger branch's (which one
 * runs is decided on the device).
 */
export function nodeFlops(graph: Graph, node: Node): number {
  const bodyFlops = () => (node.bodies ?? []).map((body) => body.nodes.reduce((sum, n) => sum + nodeFlops(body, n), 0));
  return kernelRecord(node.kernel).flops(kernelNode(graph, node, bodyFlops));
}

/** Bytes a value occupies on the device (float16 values take two bytes an element). */
export function valueBytes(graph: Graph, id: number): number {
  const v = graphValue(graph, id);
  return sizeOf(v.shape) * valueElementBytes(v);
}

/** True if the node computes in float16: all its floating-point inputs (or those of `inputs`) are float16 values. */
export function computesInFloat16(graph: Graph, node: Node, inputs: readonly ValueId[] = node.inputs): boolean {
  const floats = inputs.map((id) => graphValue(graph, id)).filter((v) => v.dtype === 'float32' && sizeOf(v.shape) > 1);
  return floats.length > 0 && floats.every((v) => v.precision === 'float16');
}

/** The FLOPs and bytes of one node (nothing for views such as Reshape). */
export function nodeCost(graph: Graph, node: Node): NodeCost {
  if (isViewNode(graph, node)) return { flops: 0, bytes: 0 };
  const bytes = [...node.inputs, ...node.outputs].reduce((sum, id) => sum + valueBytes(graph, id), 0);
  return { flops: nodeFlops(graph, node), bytes };
}
