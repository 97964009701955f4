/**
 * The `ConcatSplitting` pattern: in inference graphs on the wasm backend, a
 * large channel concatenation of two channels-last tensors that only a
 * 1 × 1 convolution (`FusedConv2D`, stride 1, no padding, linear or relu)
 * reads is not made: each tensor is convolved with its own slice of the
 * filter's input channels (the first with the bias) and the two results are
 * added, by one `poptfjs.AddRelu` pass for a relu. A 1 × 1 convolution of a
 * concatenation is the sum of those of its parts: the convolutions do the
 * same FLOPs between them and no joined copy is written. SqueezeNet's fire
 * modules join two [1, 55, 55, 64] tensors that the next module's squeeze
 * convolution reads: the join took 0.20 ms on 2 threads. The filter slices
 * are computed from the weights once, not every run.
 *
 * Concatenations of less than {@link MIN_JOINED_BYTES} are left alone (the
 * extra convolution and add cost more than a small copy), as are training
 * graphs, float16 values and other backends.
 */
import type { Node, NodeId, ValueId } from '../graph.js';
import { POPTFJS_KERNELS } from '../../backend/kernel_catalogue/kernel_catalogue.js';
import type { GraphEditor } from './graph_editor.js';
import { rewriteInferenceNodes } from './inference_rewrite.js';
import type { Pattern } from './pattern.js';

/** The backends where the split runs faster than the join (their `poptfjs.AddRelu` is one pass). */
const SPLIT_BACKENDS: ReadonlySet<string> = new Set(['wasm']);

/** The smallest joined tensor, in bytes, whose concatenation is split. */
export const MIN_JOINED_BYTES = 512 * 1024;

/** The convolution's activations that the split keeps exactly. */
const ACTIVATIONS: ReadonlySet<string> = new Set(['linear', 'relu']);

/** The two-input channel concatenation that `conv`, a 1 × 1 convolution, alone reads, if it splits. */
function splittableConcat(editor: GraphEditor, uses: ReadonlyMap<ValueId, number>, conv: Node): Node | undefined {
  if (conv.kernel !== 'FusedConv2D' || conv.inputNames?.join() !== 'x,filter,bias' || conv.outputs.length !== 1) return undefined;
  const { strides, pad, dataFormat, dilations, activation } = conv.attrs as Record<string, unknown>;
  if (dataFormat !== 'NHWC' || !ACTIVATIONS.has((activation as string | undefined) ?? 'linear')) return undefined;
  const ones = (v: unknown) => v === 1 || (Array.isArray(v) && v.every((d) => d === 1));
  // A 1 × 1 window at stride 1 pads nothing with 'same'.
  const noPadding = pad === 'valid' || pad === 'same' || (Array.isArray(pad) && pad.flat().every((p) => p === 0));
  if (!ones(strides) || !(dilations === undefined || ones(dilations)) || !noPadding) return undefined;
  const filterShape = editor.value(conv.inputs[1]!).shape;
  if (filterShape[0] !== 1 || filterShape[1] !== 1) return undefined;
  const joined = conv.inputs[0]!;
  const concat = editor.producer(joined);
  if (concat?.kernel !== 'Concat' || concat.inputs.length !== 2 || uses.get(joined) !== 1) return undefined;
  const value = editor.value(joined);
  const axis = concat.attrs.axis as number;
  if (value.shape.length !== 4 || (axis !== 3 && axis !== -1)) return undefined;
  const involved = [...concat.inputs, joined, ...conv.inputs, conv.outputs[0]!].map((id) => editor.value(id));
  if (involved.some((v) => v.dtype !== 'float32' || v.precision === 'float16')) return undefined;
  return 4 * value.shape.reduce((a, b) => a * b, 1) >= MIN_JOINED_BYTES ? concat : undefined;
}

/** The input channels `start` to `start + channels` of `filter` ([1, 1, in, out]), sliced before the node `before`. */
function filterChannels(editor: GraphEditor, before: NodeId, filter: ValueId, start: number, channels: number): ValueId {
  const size = [1, 1, channels, editor.value(filter).shape[3]!];
  return editor.insertBefore(before, {
    kernel: 'Slice',
    inputNames: ['x'],
    inputs: [filter],
    attrs: { begin: [0, 0, start, 0], size },
    outputs: [{ shape: size, dtype: 'float32' }],
  })[0]!;
}

/** Splits every large channel concatenation that a 1 × 1 convolution alone reads into two convolutions and an add. */
export const concatSplitting: Pattern = {
  name: 'ConcatSplitting',
  description: 'makes a 1 × 1 convolution of a large channel Concat of two tensors the sum of their convolutions with slices of its filter (inference graphs on wasm)',
  level: 'Default',
  apply: (graph, context) => {
    if (!SPLIT_BACKENDS.has(context.backend)) return { graph, count: 0 };
    return rewriteInferenceNodes(graph, context, (editor, uses, conv) => {
      const concat = splittableConcat(editor, uses, conv);
      if (!concat) return false;
      const [, filter, bias] = conv.inputs as [ValueId, ValueId, ValueId];
      const out = editor.value(conv.outputs[0]!);
      let start = 0;
      const parts = concat.inputs.map((part, i) => {
        const channels = editor.value(part).shape[3]!;
        const partFilter = filterChannels(editor, conv.id, filter, start, channels);
        start += channels;
        const [convolved] = editor.insertBefore(conv.id, {
          kernel: 'FusedConv2D',
          inputNames: i === 0 ? ['x', 'filter', 'bias'] : ['x', 'filter'],
          inputs: i === 0 ? [part, partFilter, bias] : [part, partFilter],
          attrs: { ...conv.attrs, activation: 'linear' },
          outputs: [{ shape: out.shape, dtype: 'float32' }],
        });
        uses.set(convolved!, 1);
        return convolved!;
      });
      const relu = conv.attrs.activation === 'relu';
      const results = editor.insertBefore(conv.id, {
        kernel: relu ? POPTFJS_KERNELS.addRelu : 'Add',
        inputNames: ['a', 'b'],
        inputs: parts,
        attrs: {},
        outputs: relu
          ? [
              { shape: out.shape, dtype: 'float32' },
              { shape: out.shape, dtype: 'float32' },
            ]
          : [{ shape: out.shape, dtype: 'float32' }],
      });
      const result = results[results.length - 1]!;
      uses.set(result, uses.get(conv.outputs[0]!) ?? 0);
      editor.removeNode(conv.id, [result]);
      return true;
    });
  },
};
