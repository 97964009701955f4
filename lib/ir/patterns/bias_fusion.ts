/**
 * The `BiasFusion` pattern: in inference graphs, a matrix product of two
 * matrices (`BatchMatMul`) whose result, or a `Reshape` of it keeping its
 * columns as the last axis, is read only by an `Add` of a weight with one
 * element per column becomes a `_FusedMatMul` with that bias, so the
 * backend adds the bias as it writes the product instead of in a second
 * pass over memory. `ActivationFusion` then folds an activation after it
 * into the same kernel. The fused kernel multiplies a batch of one matrix
 * each (`[1, rows, depth]`, as `tf.fused.matMul` calls it: the wasm kernel
 * reads its operands as 3-D), between `Reshape`s, which copy nothing.
 *
 * This is how `torch.onnx.export` writes a `Linear` layer on a batch of
 * sequences (`MatMul` then `Add`, the product made one 2-D product by the
 * importer); a transformer encoder layer has four (the attention's input and
 * output projections and the feed-forward pair).
 *
 * Training graphs are left alone (their backward nodes were traced for the
 * unfused kernels), as are float16 values (rounded after each kernel).
 */
import type { Node, ValueId } from '../graph.js';
import type { GraphEditor } from './graph_editor.js';
import { rewriteInferenceNodes } from './inference_rewrite.js';
import type { Pattern } from './pattern.js';

/** A product and bias `Add` that fuse: the product and the bias (as a `[columns]` value). */
interface BiasedProduct {
  readonly product: Node;
  readonly bias: ValueId;
}

/**
 * `id` as the bias of a product of `columns` columns, if it is one: a
 * float32 parameter or constant of shape `[columns]`, or a float32
 * constant of `columns` elements along its last axis (as a new `[columns]`
 * constant when it has more axes: the wasm kernel takes rank-1 biases only, and
 * reads the rank its data was made with).
 */
function columnBias(editor: GraphEditor, id: ValueId, columns: number): ValueId | undefined {
  const value = editor.value(id);
  if (value.dtype !== 'float32' || value.precision === 'float16') return undefined;
  const shape = value.shape;
  if (shape.length === 0 || shape[shape.length - 1] !== columns || !shape.slice(0, -1).every((d) => d === 1)) return undefined;
  if (shape.length === 1 && (value.source.kind === 'param' || value.source.kind === 'constant')) return id;
  return value.source.kind === 'constant' && value.source.data !== null ? editor.addConstant(value.source.data, [columns], 'float32') : undefined;
}

/** The product and bias that `add` adds, if they fuse. */
function biasedProduct(editor: GraphEditor, uses: ReadonlyMap<ValueId, number>, add: Node): BiasedProduct | undefined {
  if (add.kernel !== 'Add' || add.inputs.length !== 2 || add.outputs.length !== 1) return undefined;
  const sum = editor.value(add.outputs[0]!);
  for (const [x, bias] of [add.inputs, [...add.inputs].reverse()] as Array<[ValueId, ValueId]>) {
    if (uses.get(x) !== 1 || editor.value(x).shape.join() !== sum.shape.join()) continue;
    const producer = editor.producer(x);
    const reshape = producer?.kernel === 'Reshape' ? producer : undefined;
    const productOut = reshape ? reshape.inputs[0]! : x;
    const product = editor.producer(productOut);
    if (product?.kernel !== 'BatchMatMul' || product.outputs.length !== 1 || uses.get(productOut) !== 1) continue;
    const out = editor.value(productOut);
    if (out.dtype !== 'float32' || out.precision === 'float16' || out.shape.length !== 2 || sum.precision === 'float16') continue;
    if (product.inputs.some((id) => editor.value(id).shape.length !== 2 || editor.value(id).precision === 'float16')) continue;
    const columns = out.shape[1]!;
    const columnBiasId = sum.shape[sum.shape.length - 1] === columns ? columnBias(editor, bias, columns) : undefined;
    if (columnBiasId !== undefined) return { product, bias: columnBiasId };
  }
  return undefined;
}

/** Fuses every bias `Add` of a matrix product into it. */
export const biasFusion: Pattern = {
  name: 'BiasFusion',
  description: 'makes the Add of a per-column weight to a matrix product (or a Reshape of it) the bias of a _FusedMatMul (inference graphs)',
  level: 'Default',
  apply: (graph, context) =>
    rewriteInferenceNodes(graph, context, (editor, uses, node) => {
      const found = biasedProduct(editor, uses, node);
      if (!found) return false;
      const { product, bias } = found;
      const sum = editor.value(node.outputs[0]!);
      const reshaped = (x: ValueId, shape: readonly number[]) =>
        editor.insertBefore(node.id, { kernel: 'Reshape', inputNames: ['x'], inputs: [x], attrs: { shape: [...shape] }, outputs: [{ shape, dtype: 'float32' }] })[0]!;
      const [rows, columns] = editor.value(product.outputs[0]!).shape as [number, number];
      const [a, b] = product.inputs.map((id) => reshaped(id, [1, ...editor.value(id).shape])) as [ValueId, ValueId];
      const [fused] = editor.insertBefore(node.id, {
        kernel: '_FusedMatMul',
        inputNames: ['a', 'b', 'bias'],
        inputs: [a, b, bias],
        attrs: { transposeA: product.attrs.transposeA ?? false, transposeB: product.attrs.transposeB ?? false, activation: 'linear' },
        outputs: [{ shape: [1, rows, columns], dtype: 'float32' }],
        annotations: product.annotations,
      });
      const result = reshaped(fused!, sum.shape);
      uses.set(fused!, 1);
      uses.set(result, uses.get(node.outputs[0]!) ?? 0);
      editor.removeNode(node.id, [result]);
      return true;
    }),
};
