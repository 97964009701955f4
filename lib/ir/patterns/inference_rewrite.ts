/**
 * The loop of the inference-graph patterns that rewrite one node at a time (TransposeSinking, ConcatSinking,
 * BiasFusion, ActivationFusion): every live node in turn, with the number of reads of each value kept up to date by
 * the rewrites; training graphs are left as they are.
 */
import { rootValues, type Graph, type Node, type ValueId } from '../graph.js';
import { GraphEditor } from './graph_editor.js';
import type { PatternContext, PatternResult } from './pattern.js';

/**
 * Offers every live node of an inference graph to `rewrite`, which edits through `editor` (keeping `uses`, the reads
 * of each value, up to date) and returns whether it rewrote the node. The result is `graph` itself when nothing was
 * rewritten or the graph is a training graph.
 */
export function rewriteInferenceNodes(
  graph: Graph,
  context: PatternContext,
  rewrite: (editor: GraphEditor, uses: Map<ValueId, number>, node: Node) => boolean,
): PatternResult {
  if (context.training) return { graph, count: 0 };
  const editor = new GraphEditor(graph);
  const uses = editor.useCounts(rootValues(graph));
  let count = 0;
  for (const node of editor.liveNodes()) if (rewrite(editor, uses, node)) count++;
  return { graph: count > 0 ? editor.build() : graph, count };
}
