/**
 * The `ConstantFolding` pattern: a node whose inputs are all constants is run
 * once, at compile time, with tfjs on the active backend, and its outputs
 * become constants of the graph.
 *
 * Random pseudo-kernels (`poptfjs.*`) are never folded (they must draw anew
 * on every run), nor are nodes without inputs (a fill is smaller as its one
 * value than as a constant), kernels the active backend lacks, nodes with an
 * output above {@link FOLDED_ELEMENTS_LIMIT} elements (to keep the graph
 * small), complex outputs or float16 ones (the device rounds them when it
 * makes them). A kernel that fails on its constant inputs is left in the
 * graph, to fail or run where it would have anyway.
 */
import * as tf from '@tensorflow/tfjs';
import { engine, type KernelInputs } from '../../backend/tfjs_internals.js';
import { getLogger } from '../../common/log.js';
import { constantData, sizeOf, type ConstantData, type Node, type Value } from '../graph.js';
import { GraphEditor } from './graph_editor.js';
import { sameShape } from './kernel_output_shapes.js';
import type { Pattern } from './pattern.js';

/** The largest output, in elements, that is folded into a constant. */
export const FOLDED_ELEMENTS_LIMIT = 1 << 20;

const log = getLogger('pattern');

function foldable(editor: GraphEditor, node: Node): boolean {
  // poptfjs's pseudo-kernels stay; a node without inputs (a fill) is smaller than the constant it would become.
  if (node.kernel.startsWith('poptfjs.') || node.inputs.length === 0) return false;
  if (
    !node.inputs.every((id) => {
      const source = editor.value(id).source;
      return source.kind === 'constant' && source.data !== null;
    })
  )
    return false;
  const outputs = node.outputs.map((id) => editor.value(id));
  if (outputs.some((v) => v.dtype === 'complex64' || v.precision === 'float16' || sizeOf(v.shape) > FOLDED_ELEMENTS_LIMIT)) return false;
  return tf.getKernel(node.kernel, tf.getBackend()) !== undefined;
}

function constantTensor(v: Value): tf.Tensor {
  return tf.tensor(constantData(v) as tf.TensorLike, [...v.shape], v.dtype);
}

function readData(t: tf.Tensor): ConstantData {
  const data = t.dataSync() as unknown;
  if (Array.isArray(data)) return data.slice() as string[];
  return (data as Float32Array | Int32Array | Uint8Array).slice();
}

/** Runs `node` on its constant inputs; undefined if the kernel fails or disagrees with the graph's shapes. */
function evaluate(editor: GraphEditor, node: Node): ConstantData[] | undefined {
  let results: ConstantData[] | undefined;
  try {
    tf.tidy(() => {
      const tensors = node.inputs.map((id) => constantTensor(editor.value(id)));
      const inputs: KernelInputs = node.inputNames ? Object.fromEntries(node.inputNames.map((name, i) => [name, tensors[i]!])) : tensors;
      const out = engine().runKernel(node.kernel, inputs, node.attrs as Record<string, unknown>);
      const outputs = Array.isArray(out) ? out : [out];
      const expected = node.outputs.map((id) => editor.value(id));
      const agrees = outputs.length === expected.length && outputs.every((t, i) => t.dtype === expected[i]!.dtype && sameShape(t.shape, expected[i]!.shape));
      if (agrees) results = outputs.map(readData);
    });
  } catch (error) {
    log.debug(() => `not folding node #${node.id} ${node.kernel}: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  }
  return results;
}

/** Replaces nodes with constant inputs by the constants they compute. */
export const constantFolding: Pattern = {
  name: 'ConstantFolding',
  description: 'evaluates nodes whose inputs are all constants once, at compile time, and replaces them by constants',
  level: 'Default',
  apply(graph) {
    const editor = new GraphEditor(graph);
    let count = 0;
    for (const node of editor.liveNodes()) {
      if (!foldable(editor, node)) continue;
      const results = evaluate(editor, node);
      if (!results) continue;
      const constants = node.outputs.map((id, i) => {
        const v = editor.value(id);
        return editor.addConstant(results[i]!, v.shape, v.dtype);
      });
      editor.removeNode(node.id, constants);
      count++;
    }
    return { graph: count > 0 ? editor.build() : graph, count };
  },
};
