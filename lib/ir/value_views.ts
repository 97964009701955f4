/**
 * Views: kernels whose output is another way of looking at their inputs'
 * storage, not new data (Poplar's tensor views; the kernel catalogue's records
 * say which kernels make them). A view takes no memory and no compute; it
 * keeps the storage it looks at alive for as long as it is used.
 */
import { KERNEL_CATALOGUE } from '../backend/kernel_catalogue/kernel_catalogue.js';
import type { Graph, Node, ValueId } from './graph.js';
import { kernelNode } from './kernel_node.js';

/**
 * True if `node`'s outputs are views of its inputs: its kernel's record says
 * so, always (a reshape, a fill) or for this call (a `Tile` that only repeats
 * dimensions of size 1, a broadcast).
 */
export function isViewNode(graph: Graph, node: Node): boolean {
  const view = KERNEL_CATALOGUE.get(node.kernel)?.view;
  return view === true || view?.(kernelNode(graph, node)) === true;
}

/**
 * For each value, the values whose storage it occupies: itself, or for the
 * output of a view, the storage of the view's inputs (followed through
 * chains of views). Inputs, parameters and constants are their own storage.
 */
export function storageRoots(graph: Graph): ReadonlyArray<readonly ValueId[]> {
  const roots: ValueId[][] = graph.values.map((v) => [v.id]);
  for (const node of graph.nodes) {
    if (!isViewNode(graph, node)) continue;
    const viewed = [...new Set(node.inputs.flatMap((id) => roots[id]!))];
    for (const id of node.outputs) roots[id] = viewed;
  }
  return roots;
}
