/**
 * The `NoOpRemoval` pattern: kernels that hand back their input unchanged are
 * removed, and chains of layout kernels are collapsed to one kernel.
 *
 * - `Identity(x)`, `Cast(x)` to x's own dtype, `Reshape(x)` to x's own shape
 *   and `Transpose(x)` with the identity permutation are replaced by `x`;
 * - `Reshape(Reshape(x))` becomes one `Reshape(x)` (or `x` when the shapes
 *   match);
 * - `Transpose(Transpose(x))` becomes one `Transpose(x)` with the composed
 *   permutation (or `x` when the two cancel);
 * - a `Transpose(x)` that only moves axes of size 1 (a classifier's
 *   `[1, 1, 1, 1000]` scores to `[1, 1000, 1, 1]`) keeps the elements in
 *   their order: it becomes a `Reshape(x)`, which copies nothing.
 *
 * Uses of a removed node's output, graph roles included, move to the value
 * that survives, so an output, the loss, a gradient or an assignment may end
 * up naming an input, a parameter or a constant.
 */
import type { Node, ValueId } from '../graph.js';
import { GraphEditor } from './graph_editor.js';
import { sameShape, transposeShape } from './kernel_output_shapes.js';
import type { Pattern } from './pattern.js';

function isIdentityPermutation(perm: readonly number[]): boolean {
  return perm.every((axis, i) => axis === i);
}

/** Whether `perm` keeps the axes of `shape` longer than 1 in their order (it moves only axes of size 1). */
function movesOnlyUnitAxes(shape: readonly number[], perm: readonly number[]): boolean {
  const kept = perm.filter((axis) => shape[axis] !== 1);
  return kept.every((axis, i) => i === 0 || axis > kept[i - 1]!);
}

/** Rewrites `node` if it is a no-op or ends a layout chain; returns true if it did. */
function simplify(editor: GraphEditor, node: Node): boolean {
  const x = node.inputs[0];
  if (x === undefined || node.outputs.length !== 1) return false;
  const input = editor.value(x);
  const output = editor.value(node.outputs[0]!);
  // A float16 output stays made by a node that rounds it: a value that is not float16 does not stand in for it.
  const standsIn = (value: ValueId) => output.precision !== 'float16' || editor.value(value).precision === 'float16';
  if (!standsIn(x)) return false;
  const replaceBy = (value: ValueId) => editor.removeNode(node.id, [value]);
  switch (node.kernel) {
    case 'Identity':
      replaceBy(x);
      return true;
    case 'Cast':
      if (node.attrs.dtype !== input.dtype) return false;
      replaceBy(x);
      return true;
    case 'Reshape': {
      if (sameShape(input.shape, output.shape)) {
        replaceBy(x);
        return true;
      }
      const inner = editor.producer(x);
      if (inner?.kernel !== 'Reshape') return false;
      const source = inner.inputs[0]!;
      if (sameShape(editor.value(source).shape, output.shape) && standsIn(source)) {
        replaceBy(source);
      } else {
        const [reshaped] = editor.insertBefore(node.id, {
          kernel: 'Reshape',
          inputNames: ['x'],
          inputs: [source],
          attrs: { ...node.attrs, shape: [...output.shape] },
          outputs: [{ shape: output.shape, dtype: output.dtype }],
        });
        replaceBy(reshaped!);
      }
      return true;
    }
    case 'Transpose': {
      const perm = node.attrs.perm as number[];
      if (isIdentityPermutation(perm)) {
        replaceBy(x);
        return true;
      }
      const inner = editor.producer(x);
      if (inner?.kernel !== 'Transpose') {
        if (!movesOnlyUnitAxes(input.shape, perm)) return false;
        const [reshaped] = editor.insertBefore(node.id, {
          kernel: 'Reshape',
          inputNames: ['x'],
          inputs: [x],
          attrs: { shape: [...output.shape] },
          outputs: [{ shape: output.shape, dtype: output.dtype }],
        });
        replaceBy(reshaped!);
        return true;
      }
      const innerPerm = inner.attrs.perm as number[];
      const composed = perm.map((axis) => innerPerm[axis]!);
      const source = inner.inputs[0]!;
      if (isIdentityPermutation(composed) && standsIn(source)) {
        replaceBy(source);
      } else {
        const [transposed] = editor.insertBefore(node.id, {
          kernel: 'Transpose',
          inputNames: ['x'],
          inputs: [source],
          attrs: { perm: composed },
          outputs: [{ shape: transposeShape(editor.value(source).shape, composed), dtype: output.dtype }],
        });
        replaceBy(transposed!);
      }
      return true;
    }
    default:
      return false;
  }
}

/** Removes identity kernels, turns Transposes of size-1 axes into Reshapes and collapses Reshape and Transpose chains. */
export const noOpRemoval: Pattern = {
  name: 'NoOpRemoval',
  description:
    'removes Identity, same-dtype Cast, same-shape Reshape and identity Transpose; makes a Transpose of size-1 axes a Reshape; collapses Reshape and Transpose chains',
  level: 'Minimal',
  apply(graph) {
    const editor = new GraphEditor(graph);
    let count = 0;
    for (const node of editor.liveNodes()) if (simplify(editor, node)) count++;
    return { graph: count > 0 ? editor.build() : graph, count };
  },
};
