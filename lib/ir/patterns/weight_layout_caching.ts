/**
 * The `WeightLayoutCaching` pattern, PopART's "transpose once": when a
 * weight is transposed several times in one step (tied weights, a weight
 * read transposed by several matmuls, the transposes `TransposedMatMul`
 * makes explicit), the first `Transpose` is kept and the others reuse its
 * result, so each weight layout is computed once per step.
 *
 * A weight is a parameter, or a parameter seen through layout-only kernels
 * (`Reshape`, `Identity`, `Cast`). Transposes in different blocks or on
 * different IPUs are kept apart, as each IPU needs its own copy.
 */
import type { Node, ValueId } from '../graph.js';
import type { GraphEditor } from './graph_editor.js';
import { mergeDuplicateNodes } from './merge_duplicate_nodes.js';
import type { Pattern } from './pattern.js';

/** Kernels that change how a weight is viewed, not what it holds. */
const LAYOUT_KERNELS: ReadonlySet<string> = new Set(['Reshape', 'Identity', 'Cast']);

/** True if `id` is a parameter or a layout-only view of one. */
function isWeight(editor: GraphEditor, id: ValueId): boolean {
  for (let current: ValueId | undefined = id; current !== undefined; ) {
    if (editor.value(current).source.kind === 'param') return true;
    const producer: Node | undefined = editor.producer(current);
    current = producer && LAYOUT_KERNELS.has(producer.kernel) ? producer.inputs[0] : undefined;
  }
  return false;
}

/** Makes every Transpose of a weight reuse the first identical one. */
export const weightLayoutCaching: Pattern = {
  name: 'WeightLayoutCaching',
  description: 'computes each transposed layout of a weight once per step: duplicate Transposes of the same weight reuse the first',
  level: 'Default',
  apply: (graph) =>
    mergeDuplicateNodes(graph, (node, editor) =>
      node.kernel === 'Transpose' && isWeight(editor, node.inputs[0]!) ? JSON.stringify([node.inputs[0], node.attrs.perm]) : undefined,
    ),
};
