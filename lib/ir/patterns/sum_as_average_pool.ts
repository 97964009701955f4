/**
 * The `SumAsAveragePool` pattern: on the wasm backend, a float32 `Sum` of a
 * large tensor over a run of adjacent axes that leaves its last axis (the
 * leading axes of a bias gradient, the spatial axes of a global pooling)
 * becomes a `Reshape` to `[outer, 1, reduced, inner]`, an `AvgPool` over the
 * whole `reduced` axis, a `Multiply` by the number of reduced elements and a
 * `Reshape` to the sum's shape. A `Mean` over such axes (the global average
 * pooling that ends a CNN imported from ONNX, once `TransposeSinking` has
 * moved it to the channels-last tensor) becomes the same pooling without the
 * `Multiply`: [1,13,13,1000] over [1,2] took 0.20 ms as a `Mean` (0.37 ms
 * with the transpose to channels-first before it), 0.03 ms as a pooling.
 *
 * The wasm `Sum` reduces innermost axes only, so it transposes such a tensor
 * first; XNNPACK's average pooling reduces it in place. Measured on the
 * bias gradients of a small CNN: [64,28,28,16] over [0,1,2] 1.84 ms as a
 * `Sum`, 0.17 ms rewritten; [64,14,14,32] 1.27 against 0.09 ms; [64,28,28,16]
 * over [1,2] 1.44 against 0.16 ms. A matmul with a ones vector, the other
 * candidate, was slower than the `Sum` (4.8 ms for the first): the summed
 * tensor is the matmul's weight operand, which XNNPACK repacks at every call.
 * Below about 16k elements the extra kernel calls cost more than they save
 * ([64,128]: 0.027 against 0.037 ms), and so does a last axis narrower than
 * 8 (few channels for the pooling). The result differs from the `Sum`'s by
 * rounding: the mean is scaled back by the count.
 */
import * as tf from '@tensorflow/tfjs';
import type { Node, ValueId } from '../graph.js';
import { GraphEditor } from './graph_editor.js';
import type { Pattern } from './pattern.js';

/** The backends whose `AvgPool` beats their `Sum` over non-innermost axes. */
const FASTER_AS_AVERAGE_POOL: ReadonlySet<string> = new Set(['wasm']);

/** The fewest elements of a tensor whose sum is rewritten. */
const MIN_ELEMENTS = 16384;

/** The narrowest kept inner block (the pooling's channels) worth rewriting. */
const MIN_INNER = 8;

/** How a sum splits its input: `[outer, reduced, inner]` elements. */
interface SumSplit {
  readonly outer: number;
  readonly reduced: number;
  readonly inner: number;
}

const product = (dims: readonly number[]) => dims.reduce((a, b) => a * b, 1);

/** The reductions this pattern rewrites: a sum, and a mean (a sum over the count). */
const REWRITTEN_KERNELS: ReadonlySet<string> = new Set(['Sum', 'Mean']);

/** The split of `node`'s input if it is a sum or mean this pattern rewrites, else undefined. */
function rewritableSum(editor: GraphEditor, node: Node): SumSplit | undefined {
  if (!REWRITTEN_KERNELS.has(node.kernel) || node.inputs.length !== 1) return undefined;
  const x = editor.value(node.inputs[0]!);
  if (x.dtype !== 'float32' || x.shape.length === 0 || product(x.shape) < MIN_ELEMENTS) return undefined;
  const axis = node.attrs.axis as number | number[] | null | undefined;
  if (axis === null || axis === undefined) return undefined;
  const axes = [...new Set(tf.util.parseAxisParam(axis, [...x.shape]))].sort((a, b) => a - b);
  const first = axes[0]!;
  const end = axes[axes.length - 1]! + 1;
  if (end - first !== axes.length || end === x.shape.length) return undefined;
  const split = { outer: product(x.shape.slice(0, first)), reduced: product(x.shape.slice(first, end)), inner: product(x.shape.slice(end)) };
  return split.reduced >= 2 && split.inner >= MIN_INNER ? split : undefined;
}

function rewrite(editor: GraphEditor, node: Node, { outer, reduced, inner }: SumSplit): void {
  const out = editor.value(node.outputs[0]!);
  const emit = (kernel: string, named: Record<string, ValueId>, attrs: Record<string, number[] | string>, shape: readonly number[]): ValueId =>
    editor.insertBefore(node.id, { kernel, inputNames: Object.keys(named), inputs: Object.values(named), attrs, outputs: [{ shape, dtype: 'float32' }] })[0]!;
  const rows = emit('Reshape', { x: node.inputs[0]! }, { shape: [outer, 1, reduced, inner] }, [outer, 1, reduced, inner]);
  const mean = emit('AvgPool', { x: rows }, { filterSize: [1, reduced], strides: [1, reduced], pad: 'valid' }, [outer, 1, 1, inner]);
  const result = node.kernel === 'Mean' ? mean : emit('Multiply', { a: mean, b: editor.addConstant(new Float32Array([reduced]), [], 'float32') }, {}, [outer, 1, 1, inner]);
  editor.removeNode(node.id, [emit('Reshape', { x: result }, { shape: [...out.shape] }, out.shape)]);
}

/** Replaces large sums and means over non-innermost axes by an average pooling, where that is faster (wasm). */
export const sumAsAveragePool: Pattern = {
  name: 'SumAsAveragePool',
  description:
    'turns a large Sum over adjacent axes before the last into Reshape + AvgPool + Multiply, and such a Mean into Reshape + AvgPool, on backends where that is faster (wasm)',
  level: 'Default',
  apply(graph, context) {
    if (!FASTER_AS_AVERAGE_POOL.has(context.backend)) return { graph, count: 0 };
    const editor = new GraphEditor(graph);
    let count = 0;
    for (const node of editor.liveNodes()) {
      const split = rewritableSum(editor, node);
      if (split === undefined) continue;
      rewrite(editor, node, split);
      count++;
    }
    return { graph: count > 0 ? editor.build() : graph, count };
  },
};
