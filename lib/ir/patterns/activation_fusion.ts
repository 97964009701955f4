/**
 * The `ActivationFusion` pattern: an activation that alone reads the output
 * of a fused convolution (`FusedConv2D`, `FusedDepthwiseConv2D`) or matrix
 * product (`_FusedMatMul`) without an activation of its own becomes that
 * kernel's activation, so the backend applies it as it writes the result
 * instead of in a second pass over memory.
 *
 * Fused: `Relu`, `Relu6`, `Elu`, `Sigmoid`, `LeakyRelu`, `Maximum` with a
 * one-element 0 (a relu), and `Minimum` with a one-element 6 after a fused
 * relu (a relu6, as ONNX's `Clip(0, 6)` comes in). The activation may also
 * read a `Reshape` of the kernel's output (a product of stacked rows shaped
 * back into a batch of sequences) that alone reads it: the `Reshape` then
 * follows the fused kernel.
 *
 * Training graphs are left alone (their backward nodes were traced for the
 * unfused kernels), as are float16 values (rounded after each kernel).
 */
import type { AttrValue, Node, ValueId } from '../graph.js';
import { constantData } from '../graph.js';
import type { GraphEditor } from './graph_editor.js';
import { rewriteInferenceNodes } from './inference_rewrite.js';
import type { Pattern } from './pattern.js';

/** The kernels that apply a fused activation. */
const FUSED_KERNELS: ReadonlySet<string> = new Set(['FusedConv2D', 'FusedDepthwiseConv2D', '_FusedMatMul']);

/** Activation kernels, by the fused activation they become. */
const ACTIVATION_OF_KERNEL: Readonly<Record<string, string>> = { Relu: 'relu', Relu6: 'relu6', Elu: 'elu', Sigmoid: 'sigmoid', LeakyRelu: 'leakyrelu' };

/** The single value of a one-element constant, or undefined. */
function constantScalar(editor: GraphEditor, id: ValueId): number | undefined {
  const value = editor.value(id);
  if (value.source.kind !== 'constant' || !value.shape.every((d) => d === 1)) return undefined;
  const data = constantData(value);
  return data && typeof data[0] === 'number' ? data[0] : undefined;
}

/** The activation `node` applies to `x` given what `x`'s kernel already applies, or undefined. */
function activationOf(editor: GraphEditor, node: Node, x: ValueId, current: string): { activation: string; attrs?: Record<string, AttrValue> } | undefined {
  const kernelActivation = ACTIVATION_OF_KERNEL[node.kernel];
  if (kernelActivation && current === 'linear') {
    return kernelActivation === 'leakyrelu' ? { activation: 'leakyrelu', attrs: { leakyreluAlpha: node.attrs.alpha ?? 0.2 } } : { activation: kernelActivation };
  }
  if (node.inputs.length !== 2) return undefined;
  const other = node.inputs[0] === x ? node.inputs[1]! : node.inputs[0]!;
  const bound = constantScalar(editor, other);
  if (node.kernel === 'Maximum' && bound === 0 && current === 'linear') return { activation: 'relu' };
  if (node.kernel === 'Minimum' && bound === 6 && current === 'relu') return { activation: 'relu6' };
  return undefined;
}

/**
 * The fused kernel's output behind `id`: `id` itself when a fused kernel
 * makes it, or the input of the `Reshape` making `id` when a fused kernel
 * makes that input and the `Reshape` alone reads it.
 */
function fusedOutput(editor: GraphEditor, uses: ReadonlyMap<ValueId, number>, id: ValueId): ValueId | undefined {
  const producer = editor.producer(id);
  if (FUSED_KERNELS.has(producer?.kernel ?? '')) return id;
  if (producer?.kernel !== 'Reshape') return undefined;
  const inner = producer.inputs[0]!;
  return FUSED_KERNELS.has(editor.producer(inner)?.kernel ?? '') && uses.get(inner) === 1 ? inner : undefined;
}

/** Folds every activation that can be folded into the fused kernel it reads. */
export const activationFusion: Pattern = {
  name: 'ActivationFusion',
  description: "makes an activation reading a fused convolution or matrix product that kernel's fused activation (inference graphs)",
  level: 'Default',
  apply: (graph, context) =>
    rewriteInferenceNodes(graph, context, (editor, uses, node) => {
      if (node.outputs.length !== 1) return false;
      const x = node.inputs.find((id) => fusedOutput(editor, uses, id) !== undefined);
      const fusedOut = x === undefined ? undefined : fusedOutput(editor, uses, x);
      const fused = fusedOut === undefined ? undefined : editor.producer(fusedOut);
      if (x === undefined || fusedOut === undefined || !fused || uses.get(x) !== 1 || fused.outputs.length !== 1) return false;
      const involved = [...fused.inputs, fusedOut, x, node.outputs[0]!];
      if (involved.some((id) => editor.value(id).precision === 'float16')) return false;
      const found = activationOf(editor, node, x, (fused.attrs.activation ?? 'linear') as string);
      const output = editor.value(node.outputs[0]!);
      if (!found || output.dtype !== editor.value(x).dtype || output.shape.join() !== editor.value(x).shape.join()) return false;
      const fusedShape = editor.value(fusedOut).shape;
      const [activated] = editor.insertBefore(node.id, {
        kernel: fused.kernel,
        inputNames: fused.inputNames,
        inputs: fused.inputs,
        attrs: { ...fused.attrs, activation: found.activation, ...found.attrs },
        outputs: [{ shape: fusedShape, dtype: output.dtype }],
        annotations: fused.annotations,
      });
      const [replacement] =
        fusedOut === x
          ? [activated!]
          : editor.insertBefore(node.id, {
              kernel: 'Reshape',
              inputNames: ['x'],
              inputs: [activated!],
              attrs: { shape: [...output.shape] },
              outputs: [{ shape: output.shape, dtype: output.dtype }],
            });
      if (fusedOut !== x) uses.set(activated!, 1);
      uses.set(replacement!, uses.get(node.outputs[0]!) ?? 0);
      editor.removeNode(node.id, [replacement!]);
      return true;
    }),
};
