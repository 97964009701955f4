/**
 * The `TransposedMatMul` pattern: a `BatchMatMul` or `_FusedMatMul` with
 * `transposeA` or `transposeB` becomes an explicit `Transpose` of that
 * operand followed by the same kernel without transposes.
 *
 * It only fires where that is faster. On the wasm backend only
 * non-transposed matmuls reach XNNPACK: [64,784]ᵀ×[64,512] took 48 ms with
 * `transposeA` and 3 ms as `Transpose` + matmul, and the other transposed
 * matmuls of an MLP's backward pass gained 3–17×. On the cpu backend the
 * explicit transpose measured no faster (81 vs 96 ms, 93 vs 108 ms, 64 vs
 * 63 ms), so the pattern stays off there, as it does on other backends,
 * whose matmuls take transposed operands natively.
 */
import type { Node, ValueId } from '../graph.js';
import { GraphEditor } from './graph_editor.js';
import { swapLastTwoAxes, transposeShape } from './kernel_output_shapes.js';
import type { Pattern, PatternContext } from './pattern.js';

/** The backends on which an explicit transpose beats a transposed matmul. */
const FASTER_WITH_EXPLICIT_TRANSPOSE: ReadonlySet<string> = new Set(['wasm']);

const MATMUL_KERNELS: ReadonlySet<string> = new Set(['BatchMatMul', '_FusedMatMul']);

/** `operand` transposed in its last two axes, by a `Transpose` inserted before `node`. */
function transposed(editor: GraphEditor, node: Node, operand: ValueId): ValueId {
  const v = editor.value(operand);
  const perm = swapLastTwoAxes(v.shape.length);
  const [out] = editor.insertBefore(node.id, {
    kernel: 'Transpose',
    inputNames: ['x'],
    inputs: [operand],
    attrs: { perm },
    outputs: [{ shape: transposeShape(v.shape, perm), dtype: v.dtype }],
  });
  return out!;
}

function lower(editor: GraphEditor, node: Node): void {
  const { transposeA, transposeB } = node.attrs;
  const names = node.inputNames!;
  const inputs = node.inputs.map((id, i) => {
    if (names[i] === 'a' && transposeA === true) return transposed(editor, node, id);
    if (names[i] === 'b' && transposeB === true) return transposed(editor, node, id);
    return id;
  });
  const outputs = editor.insertBefore(node.id, {
    kernel: node.kernel,
    inputNames: names,
    inputs,
    attrs: { ...node.attrs, transposeA: false, transposeB: false },
    outputs: node.outputs.map((id) => editor.value(id)),
  });
  editor.removeNode(node.id, outputs);
}

/** Replaces transposed matmuls by an explicit transpose and a plain matmul, where that is faster. */
export const transposedMatMul: Pattern = {
  name: 'TransposedMatMul',
  description: 'turns matmuls with transposeA/transposeB into Transpose + plain matmul on backends where that is faster (wasm)',
  level: 'Default',
  apply(graph, context: PatternContext) {
    if (!FASTER_WITH_EXPLICIT_TRANSPOSE.has(context.backend)) return { graph, count: 0 };
    const editor = new GraphEditor(graph);
    let count = 0;
    for (const node of editor.liveNodes()) {
      if (!MATMUL_KERNELS.has(node.kernel) || node.inputNames === null) continue;
      if (node.attrs.transposeA !== true && node.attrs.transposeB !== true) continue;
      lower(editor, node);
      count++;
    }
    return { graph: count > 0 ? editor.build() : graph, count };
  },
};
