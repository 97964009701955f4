/**
 * Which values survive dead-code elimination, and the ids they get.
 *
 * `eliminateDeadCode` (lib/ir/dead_code.ts) keeps the graph inputs and what
 * the roots depend on, and renumbers the kept values densely in their old
 * order. The ONNX importer maps ONNX tensor names to values before the
 * elimination; this gives it the ids those values have afterwards.
 */
import { rootValues, type Graph, type ValueId } from '../ir/graph.js';

/** For each value of `graph` that dead-code elimination keeps, its id in the eliminated graph. */
export function valueIdsAfterDeadCodeElimination(graph: Graph): Map<ValueId, ValueId> {
  const needed = new Set<ValueId>([...graph.inputs, ...rootValues(graph)]);
  for (let i = graph.nodes.length - 1; i >= 0; i--) {
    const node = graph.nodes[i]!;
    if (!node.outputs.some((id) => needed.has(id))) continue;
    for (const id of node.outputs) needed.add(id);
    for (const id of node.inputs) needed.add(id);
  }
  const ids = new Map<ValueId, ValueId>();
  for (const value of graph.values) if (needed.has(value.id)) ids.set(value.id, ids.size);
  return ids;
}
