/**
 * The `ReluGradFusion` pattern: in training graphs on the wasm backend, the
 * gradient of a `Relu` as tfjs writes it, `Multiply(dy, Step(x))` (alpha
 * 0) with the `Step` read by nothing else, becomes one `poptfjs.ReluGrad` of
 * `dy` and `x`: one pass instead of two, with the same numbers
 * (../../backend/wasm_kernels/relu_passes.ts). Float16 values are left
 * alone (rounded after each kernel).
 */
import { rootValues, type Node, type ValueId } from '../graph.js';
import { POPTFJS_KERNELS } from '../../backend/kernel_catalogue/kernel_catalogue.js';
import { GraphEditor } from './graph_editor.js';
import type { Pattern } from './pattern.js';

/** The backends whose `poptfjs.ReluGrad` is one pass. */
const ONE_PASS_BACKENDS: ReadonlySet<string> = new Set(['wasm']);

/** `dy` and `x` of a `Multiply(dy, Step(x))` that fuses. */
function reluGradient(editor: GraphEditor, uses: ReadonlyMap<ValueId, number>, multiply: Node): { dy: ValueId; x: ValueId } | undefined {
  if (multiply.kernel !== 'Multiply' || multiply.inputs.length !== 2) return undefined;
  const [dy, stepped] = multiply.inputs as [ValueId, ValueId];
  const step = editor.producer(stepped);
  if (step?.kernel !== 'Step' || (step.attrs.alpha ?? 0) !== 0 || uses.get(stepped) !== 1) return undefined;
  const x = step.inputs[0]!;
  const values = [dy, x, stepped, multiply.outputs[0]!].map((id) => editor.value(id));
  if (values.some((v) => v.dtype !== 'float32' || v.precision === 'float16' || v.shape.join() !== values[0]!.shape.join())) return undefined;
  return { dy, x };
}

/** Makes every `Multiply(dy, Step(x))` one `poptfjs.ReluGrad`. */
export const reluGradFusion: Pattern = {
  name: 'ReluGradFusion',
  description: 'makes Multiply(dy, Step(x)), the gradient of a Relu, one poptfjs.ReluGrad (training graphs on wasm)',
  level: 'Default',
  apply(graph, context) {
    if (!context.training || !ONE_PASS_BACKENDS.has(context.backend)) return { graph, count: 0 };
    const editor = new GraphEditor(graph);
    const uses = editor.useCounts(rootValues(graph));
    let count = 0;
    for (const multiply of editor.liveNodes()) {
      const found = reluGradient(editor, uses, multiply);
      if (found === undefined) continue;
      const [gradient] = editor.insertBefore(multiply.id, {
        kernel: POPTFJS_KERNELS.reluGrad,
        inputNames: ['dy', 'x'],
        inputs: [found.dy, found.x],
        attrs: {},
        outputs: [{ shape: editor.value(multiply.outputs[0]!).shape, dtype: 'float32' }],
      });
      editor.removeNode(multiply.id, [gradient!]);
      count++;
    }
    return { graph: count > 0 ? editor.build() : graph, count };
  },
};
