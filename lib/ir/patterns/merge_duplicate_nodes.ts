/**
 * Merging nodes that compute the same values: of the nodes with the same key,
 * the first is kept and the others' uses go to it. Shared by the patterns that
 * deduplicate work (`CommonSubexpression`, `WeightLayoutCaching`).
 */
import type { Graph, Node } from '../graph.js';
import { GraphEditor } from './graph_editor.js';
import type { PatternResult } from './pattern.js';

/**
 * Merges the live nodes of `graph` that `keyOf` gives the same key (nodes it
 * gives no key are left alone). Nodes in different blocks or on different
 * IPUs never merge, so merging moves no work or traffic between IPUs, nor do
 * nodes whose outputs differ in precision (one rounds to float16, the other not).
 */
export function mergeDuplicateNodes(graph: Graph, keyOf: (node: Node, editor: GraphEditor) => string | undefined): PatternResult {
  const editor = new GraphEditor(graph);
  const first = new Map<string, Node>();
  let count = 0;
  for (const node of editor.liveNodes()) {
    const key = keyOf(node, editor);
    if (key === undefined) continue;
    const precisions = node.outputs.map((id) => editor.value(id).precision ?? null);
    const placedKey = JSON.stringify([key, node.annotations.block ?? null, node.annotations.ipu ?? null, precisions]);
    const kept = first.get(placedKey);
    if (!kept) {
      first.set(placedKey, node);
      continue;
    }
    editor.removeNode(node.id, kept.outputs);
    count++;
  }
  return { graph: count > 0 ? editor.build() : graph, count };
}
