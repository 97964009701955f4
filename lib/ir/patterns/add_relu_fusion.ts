/**
 * The `AddReluFusion` pattern: in training graphs on the wasm backend, a
 * `Relu` of an `Add` of a float32 tensor `a` and a `b` of `a`'s shape or
 * broadcast along its last axes (a convolution's bias) becomes one
 * `poptfjs.AddRelu`, which writes the sum (still read by the relu's
 * gradient, `Step` of it) and the relu in one pass instead of two, with the
 * same numbers (../../backend/wasm_kernels/relu_passes.ts). Float16 values
 * are left alone (rounded after each kernel).
 */
import type { Node } from '../graph.js';
import { POPTFJS_KERNELS } from '../../backend/kernel_catalogue/kernel_catalogue.js';
import { trailingBroadcastLength } from '../../backend/poptfjs_kernels/relu_kernels.js';
import { GraphEditor } from './graph_editor.js';
import type { Pattern } from './pattern.js';

/** The backends whose `poptfjs.AddRelu` is one pass. */
const ONE_PASS_BACKENDS: ReadonlySet<string> = new Set(['wasm']);

/** The `Add` whose sum `relu` reads, when the two fuse. */
function fusableAdd(editor: GraphEditor, relu: Node): Node | undefined {
  if (relu.kernel !== 'Relu' || relu.inputs.length !== 1) return undefined;
  const add = editor.producer(relu.inputs[0]!);
  if (add?.kernel !== 'Add' || add.inputs.length !== 2 || add.outputs.length !== 1) return undefined;
  const [a, b, sum] = [add.inputs[0]!, add.inputs[1]!, add.outputs[0]!].map((id) => editor.value(id));
  const values = [a!, b!, sum!, editor.value(relu.outputs[0]!)];
  if (values.some((v) => v.dtype !== 'float32' || v.precision === 'float16')) return undefined;
  if (a!.shape.join() !== sum!.shape.join() || trailingBroadcastLength(a!.shape, b!.shape) === undefined) return undefined;
  return add;
}

/** Makes every bias `Add` and the `Relu` of its sum one `poptfjs.AddRelu`. */
export const addReluFusion: Pattern = {
  name: 'AddReluFusion',
  description: 'makes a Relu of an Add (a bias broadcast along the last axes) one poptfjs.AddRelu writing the sum and the relu (training graphs on wasm)',
  level: 'Default',
  apply(graph, context) {
    if (!context.training || !ONE_PASS_BACKENDS.has(context.backend)) return { graph, count: 0 };
    const editor = new GraphEditor(graph);
    let count = 0;
    for (const relu of editor.liveNodes()) {
      const add = fusableAdd(editor, relu);
      if (add === undefined) continue;
      const shape = editor.value(add.outputs[0]!).shape;
      const [sum, activated] = editor.insertBefore(add.id, {
        kernel: POPTFJS_KERNELS.addRelu,
        inputNames: ['a', 'b'],
        inputs: add.inputs,
        attrs: {},
        outputs: [
          { shape, dtype: 'float32' },
          { shape, dtype: 'float32' },
        ],
      });
      editor.removeNode(add.id, [sum!]);
      editor.removeNode(relu.id, [activated!]);
      count++;
    }
    return { graph: count > 0 ? editor.build() : graph, count };
  },
};
