/**
 * The `TransposeSinking` pattern: a `Transpose` read only by a kernel that
 * does not care about the layout of its operand (an elementwise kernel, a
 * concatenation, a padding) moves past that kernel, which then works in the
 * layout before the transpose. Transposes travel down the graph this way
 * until they meet their inverse, which `NoOpRemoval` cancels: the
 * channels-first to channels-last transposes an imported ONNX convolution
 * network makes around every tfjs convolution, pooling and activation then
 * disappear, but at the network's ends.
 *
 * Moved past:
 * - a unary elementwise kernel (`Relu`, `Sigmoid`, `Cast`, ...);
 * - a binary elementwise kernel whose other operand holds one element, or is
 *   the same transpose of a value of the same shape (a residual `Add`);
 * - `Concat` of transposes by one permutation (along the permuted axis);
 * - `PadV2` (its paddings permuted);
 * - a reduction (`Mean`, `Sum`, `Min`, `Prod`) over given axes (its
 *   axes permuted; without `keepDims`, the transpose after it permutes the
 *   axes it keeps): the global average pooling that ends an imported CNN
 *   then reduces the channels-last tensor, with no transpose of it.
 *
 * Training graphs are left alone (backward nodes read forward values by
 * layout), as are float16 values (the values this pattern makes would lose
 * their precision).
 */
import type { Node, ValueId } from '../graph.js';
import type { GraphEditor } from './graph_editor.js';
import { transposeShape } from './kernel_output_shapes.js';
import { rewriteInferenceNodes } from './inference_rewrite.js';
import type { Pattern } from './pattern.js';

/** Elementwise kernels of one tensor input. */
const UNARY_KERNELS: ReadonlySet<string> = new Set([
  'Relu',
  'Relu6',
  'Elu',
  'Selu',
  'LeakyRelu',
  'Sigmoid',
  'Tanh',
  'Neg',
  'Abs',
  'Exp',
  'Log',
  'Sqrt',
  'Rsqrt',
  'Square',
  'Erf',
  'ClipByValue',
  'Cast',
]);

/** Elementwise kernels of two tensor inputs. */
const BINARY_KERNELS: ReadonlySet<string> = new Set(['Add', 'Sub', 'Multiply', 'RealDiv', 'Maximum', 'Minimum', 'Pow']);

/** Reductions over an `axis` attribute, with `keepDims` (tfjs's `Max` names its axes otherwise, and stays). */
const REDUCTION_KERNELS: ReadonlySet<string> = new Set(['Mean', 'Sum', 'Min', 'Prod']);

/** The single-input Transpose making `id`, when `node` is its only reader. */
function soleTranspose(editor: GraphEditor, uses: ReadonlyMap<ValueId, number>, node: Node, id: ValueId): Node | undefined {
  const producer = editor.producer(id);
  if (producer?.kernel !== 'Transpose') return undefined;
  const reads = node.inputs.filter((input) => input === id).length;
  return uses.get(id) === reads ? producer : undefined;
}

function holdsOneElement(editor: GraphEditor, id: ValueId): boolean {
  return editor.value(id).shape.every((d) => d === 1);
}

function isHalf(editor: GraphEditor, node: Node): boolean {
  return [...node.inputs, ...node.outputs].some((id) => editor.value(id).precision === 'float16');
}

/**
 * For `node`, its inputs read before the transpose (undefined when it
 * cannot move) and the permutation; `attrs` are the node's own, adjusted.
 */
function sunk(editor: GraphEditor, uses: ReadonlyMap<ValueId, number>, node: Node): { inputs: ValueId[]; perm: number[]; attrs: Node['attrs'] } | undefined {
  if (node.outputs.length !== 1 || isHalf(editor, node)) return undefined;
  const transposes = node.inputs.map((id) => soleTranspose(editor, uses, node, id));
  const first = transposes.find((t) => t !== undefined);
  if (!first) return undefined;
  const perm = first.attrs.perm as number[];
  const samePerm = (t: Node | undefined) => t !== undefined && JSON.stringify(t.attrs.perm) === JSON.stringify(perm);
  const before = (i: number) => transposes[i]!.inputs[0]!;
  if (UNARY_KERNELS.has(node.kernel) && node.inputs.length === 1) return { inputs: [before(0)], perm, attrs: node.attrs };
  if (BINARY_KERNELS.has(node.kernel) && node.inputs.length === 2) {
    const [a, b] = node.inputs as [ValueId, ValueId];
    if (samePerm(transposes[0]) && samePerm(transposes[1]) && editor.value(before(0)).shape.join() === editor.value(before(1)).shape.join()) {
      return { inputs: [before(0), before(1)], perm, attrs: node.attrs };
    }
    if (samePerm(transposes[0]) && holdsOneElement(editor, b) && editor.value(b).shape.length <= perm.length) return { inputs: [before(0), b], perm, attrs: node.attrs };
    if (samePerm(transposes[1]) && holdsOneElement(editor, a) && editor.value(a).shape.length <= perm.length) return { inputs: [a, before(1)], perm, attrs: node.attrs };
    return undefined;
  }
  if (node.kernel === 'Concat' && transposes.every(samePerm)) {
    const rank = perm.length;
    const axis = ((node.attrs.axis as number) + rank) % rank;
    return { inputs: node.inputs.map((_, i) => before(i)), perm, attrs: { ...node.attrs, axis: perm[axis]! } };
  }
  if (node.kernel === 'PadV2' && node.inputs.length === 1) {
    const paddings = node.attrs.paddings as Array<[number, number]>;
    const permuted = new Array<[number, number]>(perm.length);
    perm.forEach((axis, j) => (permuted[axis] = paddings[j]!));
    return { inputs: [before(0)], perm, attrs: { ...node.attrs, paddings: permuted } };
  }
  if (REDUCTION_KERNELS.has(node.kernel) && node.inputs.length === 1) return sunkReduction(node, perm, before(0));
  return undefined;
}

/**
 * A reduction moved before the transpose `perm`: it reduces the axes the
 * transpose took them from, and the transpose after it permutes what is
 * left (every axis with `keepDims`, else the kept ones, renumbered).
 */
function sunkReduction(node: Node, perm: readonly number[], input: ValueId): { inputs: ValueId[]; perm: number[]; attrs: Node['attrs'] } | undefined {
  const axis = node.attrs.axis as number | number[] | null | undefined;
  if (axis === null || axis === undefined) return undefined;
  const rank = perm.length;
  const axes = [...new Set((Array.isArray(axis) ? axis : [axis]).map((a) => (a + rank) % rank))];
  const reducedBefore = axes.map((a) => perm[a]!);
  if (node.attrs.keepDims === true) return { inputs: [input], perm: [...perm], attrs: { ...node.attrs, axis: reducedBefore } };
  const keptAfter = perm.filter((_, j) => !axes.includes(j));
  const keptBefore = [...keptAfter].sort((a, b) => a - b);
  return { inputs: [input], perm: keptAfter.map((a) => keptBefore.indexOf(a)), attrs: { ...node.attrs, axis: reducedBefore } };
}

/** The shape of `node`'s output when it works on values of `shape` laid out before `perm`. */
function shapeBefore(shape: readonly number[], perm: readonly number[]): number[] {
  const inverse = new Array<number>(perm.length);
  perm.forEach((axis, j) => (inverse[axis] = j));
  return transposeShape(shape, inverse);
}

/** Moves every transpose that can move past the kernel reading it. */
export const transposeSinking: Pattern = {
  name: 'TransposeSinking',
  description: 'moves a Transpose past the elementwise, Concat, PadV2 or reduction kernel that alone reads it, so that it can meet its inverse (inference graphs)',
  level: 'Default',
  apply: (graph, context) =>
    rewriteInferenceNodes(graph, context, (editor, uses, node) => {
      const move = sunk(editor, uses, node);
      if (!move) return false;
      const output = editor.value(node.outputs[0]!);
      const [inner] = editor.insertBefore(node.id, {
        kernel: node.kernel,
        inputNames: node.inputNames,
        inputs: move.inputs,
        attrs: move.attrs,
        outputs: [{ shape: shapeBefore(output.shape, move.perm), dtype: output.dtype }],
      });
      const [transposed] = editor.insertBefore(node.id, {
        kernel: 'Transpose',
        inputNames: ['x'],
        inputs: [inner!],
        attrs: { perm: move.perm },
        outputs: [{ shape: output.shape, dtype: output.dtype }],
      });
      uses.set(inner!, 1);
      uses.set(transposed!, uses.get(node.outputs[0]!) ?? 0);
      editor.removeNode(node.id, [transposed!]);
      return true;
    }),
};
