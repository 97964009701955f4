/**
 * The `FusedKernelLowering` pattern: in training graphs, `_FusedMatMul`,
 * `FusedConv2D` and `FusedDepthwiseConv2D` are lowered to the plain kernel
 * (`BatchMatMul`, `Conv2D`, `DepthwiseConv2dNative`), a bias `Add` and the
 * activation kernel, exactly as the tfjs cpu kernels compute them.
 *
 * The fused kernels have no registered gradient: the `tf.fused.*` ops give
 * them one through `customGrad`, which the trace records, so a traced
 * training step already holds their gradients (written in terms of the fused
 * output) and runs correctly, and faster, with the fused kernels kept (the
 * same losses, bit for bit, for a small CNN on wasm, 2% faster). Hence the
 * pattern is at level `All`, not on by default: it is for graphs read as the
 * three separate steps, e.g. float16 emulation rounding after the
 * convolution, the bias and the activation each. Inference graphs always
 * keep the fused kernels.
 */
import type { DataType } from '@tensorflow/tfjs';
import { PoptfjsError } from '../../common/errors.js';
import type { AttrValue, Node, ValueId } from '../graph.js';
import { GraphEditor } from './graph_editor.js';
import { broadcastShape, conv2dShape, matMulShape, sameShape } from './kernel_output_shapes.js';
import type { Pattern } from './pattern.js';

/** The plain kernel behind each fused kernel, and the attributes it keeps. */
const PLAIN_KERNELS: Readonly<Record<string, { kernel: string; attrs: readonly string[] }>> = {
  _FusedMatMul: { kernel: 'BatchMatMul', attrs: ['transposeA', 'transposeB'] },
  FusedConv2D: { kernel: 'Conv2D', attrs: ['strides', 'pad', 'dataFormat', 'dilations', 'dimRoundingMode'] },
  FusedDepthwiseConv2D: { kernel: 'DepthwiseConv2dNative', attrs: ['strides', 'pad', 'dataFormat', 'dilations', 'dimRoundingMode'] },
};

/** The activation kernels without extra inputs or attributes, by fused activation name. */
const UNARY_ACTIVATIONS: Readonly<Record<string, string>> = { relu: 'Relu', relu6: 'Relu6', elu: 'Elu', sigmoid: 'Sigmoid' };

/** The activations a fused kernel can apply (see tfjs `applyActivation`). */
const ACTIVATIONS: ReadonlySet<string> = new Set(['linear', 'relu', 'relu6', 'elu', 'sigmoid', 'leakyrelu', 'prelu']);

/** The fused activation's default `leakyreluAlpha`, as in the `tf.fused.*` ops. */
const DEFAULT_LEAKYRELU_ALPHA = 0.2;

/**
 * True when a 1-D per-channel tensor (bias, PReLU weights) of `node` must be
 * reshaped to `[C, 1, 1]` to line up with the channels, as the cpu
 * `FusedConv2D` kernel does for NCHW.
 */
function needsChannelsFirstReshape(node: Node, shape: readonly number[]): boolean {
  return node.kernel === 'FusedConv2D' && node.attrs.dataFormat === 'NCHW' && shape.length === 1 && shape[0] !== 1;
}

/** Emits the kernel calls that replace one node, one after another, before it. */
class LoweredKernels {
  constructor(
    private readonly editor: GraphEditor,
    private readonly node: Node,
    private readonly dtype: DataType,
  ) {}

  /** Emits a single-output kernel call and returns its output. */
  emit(kernel: string, named: Record<string, ValueId>, attrs: Record<string, AttrValue>, shape: readonly number[]): ValueId {
    const [out] = this.editor.insertBefore(this.node.id, {
      kernel,
      inputNames: Object.keys(named),
      inputs: Object.values(named),
      attrs,
      outputs: [{ shape, dtype: this.dtype }],
    });
    return out!;
  }

  shape(id: ValueId): readonly number[] {
    return this.editor.value(id).shape;
  }

  /** `values` as a per-channel tensor lined up with the node's output. */
  perChannel(values: ValueId): ValueId {
    const shape = this.shape(values);
    if (!needsChannelsFirstReshape(this.node, shape)) return values;
    return this.emit('Reshape', { x: values }, { shape: [shape[0]!, 1, 1] }, [shape[0]!, 1, 1]);
  }
}

/** Lowers `node`; returns false (emitting nothing) if the lowered shapes would not match the node's output. */
function lower(editor: GraphEditor, node: Node): boolean {
  const activation = (node.attrs.activation ?? 'linear') as string;
  if (!ACTIVATIONS.has(activation)) {
    throw new PoptfjsError(`node #${node.id} ${node.kernel} has an unknown fused activation '${activation}'`, {
      type: 'compile',
      location: node.annotations.layer ?? node.kernel,
    });
  }
  const named = new Map(node.inputNames!.map((name, i) => [name, node.inputs[i]!]));
  const output = editor.value(node.outputs[0]!);
  const plain = PLAIN_KERNELS[node.kernel]!;
  const plainAttrs = Object.fromEntries(plain.attrs.filter((k) => k in node.attrs).map((k) => [k, node.attrs[k]!]));
  const [lhsName, rhsName] = node.kernel === '_FusedMatMul' ? ['a', 'b'] : ['x', 'filter'];
  const lhs = named.get(lhsName!)!;
  const rhs = named.get(rhsName!)!;
  const bias = named.get('bias');
  const alpha = activation === 'prelu' ? named.get('preluActivationWeights') : undefined;
  if (activation === 'prelu' && alpha === undefined) {
    throw new PoptfjsError(`node #${node.id} ${node.kernel} has a prelu activation without preluActivationWeights`, {
      type: 'compile',
      location: node.annotations.layer ?? node.kernel,
    });
  }
  const lhsShape = editor.value(lhs).shape;
  const rhsShape = editor.value(rhs).shape;
  const plainShape =
    node.kernel === '_FusedMatMul'
      ? matMulShape(lhsShape, rhsShape, node.attrs.transposeA === true, node.attrs.transposeB === true)
      : conv2dShape(lhsShape, rhsShape, node.attrs, node.kernel === 'FusedDepthwiseConv2D');
  const alignedShape = (id: ValueId): readonly number[] => {
    const shape = editor.value(id).shape;
    return needsChannelsFirstReshape(node, shape) ? [shape[0]!, 1, 1] : shape;
  };
  let finalShape = plainShape;
  if (bias !== undefined) finalShape = broadcastShape(finalShape, alignedShape(bias));
  if (alpha !== undefined) finalShape = broadcastShape(finalShape, alignedShape(alpha));
  if (!sameShape(finalShape, output.shape)) return false;

  const kernels = new LoweredKernels(editor, node, output.dtype);
  let current = kernels.emit(plain.kernel, { [lhsName!]: lhs, [rhsName!]: rhs }, plainAttrs, plainShape);
  if (bias !== undefined) {
    const b = kernels.perChannel(bias);
    current = kernels.emit('Add', { a: current, b }, {}, broadcastShape(kernels.shape(current), kernels.shape(b)));
  }
  const unary = UNARY_ACTIVATIONS[activation];
  if (unary !== undefined) {
    current = kernels.emit(unary, { x: current }, {}, kernels.shape(current));
  } else if (activation === 'leakyrelu') {
    const leakyAlpha = node.attrs.leakyreluAlpha ?? DEFAULT_LEAKYRELU_ALPHA;
    current = kernels.emit('LeakyRelu', { x: current }, { alpha: leakyAlpha }, kernels.shape(current));
  } else if (alpha !== undefined) {
    const a = kernels.perChannel(alpha);
    current = kernels.emit('Prelu', { x: current, alpha: a }, {}, broadcastShape(kernels.shape(current), kernels.shape(a)));
  }
  editor.removeNode(node.id, [current]);
  return true;
}

/** Lowers fused kernels to plain kernel + bias + activation in training graphs. */
export const fusedKernelLowering: Pattern = {
  name: 'FusedKernelLowering',
  description: 'lowers _FusedMatMul, FusedConv2D and FusedDepthwiseConv2D to kernel + bias Add + activation in training graphs',
  level: 'All',
  apply(graph, context) {
    if (!context.training) return { graph, count: 0 };
    const editor = new GraphEditor(graph);
    let count = 0;
    for (const node of editor.liveNodes()) {
      if (!(node.kernel in PLAIN_KERNELS) || node.inputNames === null) continue;
      if (lower(editor, node)) count++;
    }
    return { graph: count > 0 ? editor.build() : graph, count };
  },
};
