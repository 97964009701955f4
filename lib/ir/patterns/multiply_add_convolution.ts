/**
 * The `MultiplyAddConvolution` pattern: in inference graphs on the wasm
 * backend, where the engine has WebAssembly relaxed SIMD, the convolutions
 * (`FusedConv2D`) are marked to run as one product of their windows and the
 * filter with fused multiply-adds, 3 × 3 ones at stride 1 by Winograd's
 * F(2 × 2, 3 × 3) where they have 32 output positions or more
 * (../../backend/wasm_kernels/fused_conv2d.ts), and the
 * 3 × 3 depthwise ones (`FusedDepthwiseConv2D`) by a SIMD routine
 * (../../backend/wasm_kernels/fused_depthwise_conv2d.ts), and the products
 * of weight matrices (`_FusedMatMul`, a dense layer: a 1 × 1 convolution,
 * ../../backend/wasm_kernels/fused_mat_mul.ts), instead of XNNPACK's
 * separate multiplies and adds. Fused multiply-adds
 * round each sum once instead of twice, as onnxruntime's and PyTorch's CPU
 * kernels do, so the outputs move in their last bits; training graphs keep
 * tfjs's numbers and are left alone.
 *
 * The routines' helper thread and XNNPACK's pool would take turns for the
 * second core (XNNPACK's threads spin-wait after each of its kernels), so a
 * graph is marked whole or not at all, and a marked graph keeps the pool off
 * (wasm_thread_pool.ts). It is marked when the routines compute each of its
 * convolutions at least as fast, and no other convolution or matrix product
 * of it needs the pool:
 * - each convolution but the depthwise ones has {@link MIN_ROWS} output
 *   positions or more: one tile of the product's 4 rows. MobileNetV2's
 *   7 × 7 ones run faster by the product (2 threads: 320 → 1280 0.45
 *   against XNNPACK's 0.61 ms, 960 → 320 0.31 against 0.46, 160 → 960 0.21
 *   against 0.24), and so does ResNet-18's session at 64 × 64, whose
 *   smallest convolutions are 2 × 2: 4.45-4.49 against 5.15-5.22 ms a run
 *   unmarked, the two sessions taking turns in one process (with
 *   F(2 × 2, 3 × 3) on its 2 × 2 ones too, 5.57 against 5.19: see
 *   `MIN_WINOGRAD_OUTPUTS`); after an onnxruntime run each, which leaves
 *   its 47 MB of weights to be read from memory again, 6.25-6.30 against
 *   7.01-7.07 (the session table: 7.25-7.37 against 7.77-8.55), its
 *   2 × 2 × 512 ones then reading their 9.4 MB filters at about 12 GB/s
 *   either way;
 * - every other convolution or product does less than
 *   {@link MAX_OTHER_FLOPS}: it runs on one thread (MobileNetV2's 1280 →
 *   1000 classifier, 2.6 MFLOP: 0.40 against 0.22 ms on the pool).
 *
 * A transformer encoder's session (two layers of 256 wide, 64 rows, no
 * convolution) runs its eight products so: 3.53-3.72 against 3.95-4.17 ms
 * a run unmarked, the two sessions taking turns.
 *
 * The depthwise routine is about even with XNNPACK's on its pool
 * (MobileNetV2's 3 × 3 ones together, 2 threads: 1.65 against 1.64 ms).
 * Sessions beside onnxruntime (2 threads): SqueezeNet 1.1 (224 × 224)
 * 11.2-12.8 → 8.0-8.2 ms a run, MobileNetV2 (224 × 224) 11.6-12.6 →
 * 10.9-11.8.
 */
import type { Graph, Node, Value, ValueId } from '../graph.js';
import { type KernelCallShapes, nodeCallShapes } from '../../backend/kernel_call_shapes.js';
import { MULTIPLY_ADD_ATTRIBUTE, asksFusedMultiplyAdd } from '../../backend/multiply_add_attribute.js';
import { computesMarkedConvolution } from '../../backend/wasm_kernels/fused_conv2d.js';
import { computesMarkedDepthwise } from '../../backend/wasm_kernels/fused_depthwise_conv2d.js';
import { markedProductRows } from '../../backend/wasm_kernels/fused_mat_mul.js';
import { relaxedSimdSupported } from '../../backend/wasm_kernels/wasm_simd_routine.js';
import { nodeCost } from '../node_cost.js';
import { rewriteInferenceNodes } from './inference_rewrite.js';
import type { Pattern } from './pattern.js';

/** The fewest output positions (batch × height × width) of a convolution of a marked graph. */
export const MIN_ROWS = 4;

/** The most FLOPs of a convolution or matrix product of a marked graph that the routines do not compute. */
export const MAX_OTHER_FLOPS = 4e6;

/** What the routines compute of a marked node, by kernel (each kernel's own rule, asked of the node's values). */
const COMPUTED_BY_ROUTINES: Readonly<Record<string, (call: KernelCallShapes) => boolean>> = {
  FusedConv2D: computesMarkedConvolution,
  FusedDepthwiseConv2D: computesMarkedDepthwise,
  // A product of fewer rows than a tile reads its weight for little work.
  _FusedMatMul: (call) => (markedProductRows(call) ?? 0) >= MIN_ROWS,
};

/**
 * Whether the routines would compute `node`, marked, as its kernel says
 * (fused_conv2d.ts, fused_depthwise_conv2d.ts, fused_mat_mul.ts): float32
 * values computed in float32, one output.
 */
function computedByRoutines(value: (id: ValueId) => Value, node: Node): boolean {
  const computes = COMPUTED_BY_ROUTINES[node.kernel];
  if (computes === undefined || node.outputs.length !== 1) return false;
  if (![...node.inputs, node.outputs[0]!].every((id) => value(id).dtype === 'float32' && value(id).precision !== 'float16')) return false;
  return computes(nodeCallShapes(node, value, { ...node.attrs, [MULTIPLY_ADD_ATTRIBUTE]: 'fused' }));
}

/** Whether the routines compute every convolution of `graph`, each (but the depthwise ones) with enough rows, and nothing else needs the pool (and they compute something). */
function worthMarking(graph: Graph): boolean {
  let computed = 0;
  for (const node of graph.nodes) {
    if (computedByRoutines((id) => graph.values[id]!, node)) {
      const out = graph.values[node.outputs[0]!]!.shape;
      if (node.kernel === 'FusedConv2D' && out[0]! * out[1]! * out[2]! < MIN_ROWS) return false;
      computed++;
    } else if (/Conv2D|Conv2d|MatMul/.test(node.kernel) && nodeCost(graph, node).flops > MAX_OTHER_FLOPS) {
      return false;
    }
  }
  return computed > 0;
}

/** Marks the convolutions and weight products of inference graphs on wasm to run with fused multiply-adds, where that is faster. */
export const multiplyAddConvolution: Pattern = {
  name: 'MultiplyAddConvolution',
  description:
    "marks the convolutions of inference graphs on wasm (3 × 3 depthwise ones too) and their products of weight matrices to run with fused multiply-adds by poptfjs's SIMD routines (WebAssembly relaxed SIMD)",
  level: 'Default',
  apply: (graph, context) => {
    if (context.backend !== 'wasm' || context.training || graph.nodes.some((n) => asksFusedMultiplyAdd(n.attrs))) return { graph, count: 0 };
    if (!relaxedSimdSupported() || !worthMarking(graph)) return { graph, count: 0 };
    return rewriteInferenceNodes(graph, context, (editor, uses, conv) => {
      if (!computedByRoutines((id) => editor.value(id), conv)) return false;
      const [marked] = editor.insertBefore(conv.id, {
        kernel: conv.kernel,
        inputNames: conv.inputNames,
        inputs: conv.inputs,
        attrs: { ...conv.attrs, [MULTIPLY_ADD_ATTRIBUTE]: 'fused' },
        outputs: [{ shape: editor.value(conv.outputs[0]!).shape, dtype: 'float32' }],
      });
      uses.set(marked!, uses.get(conv.outputs[0]!) ?? 0);
      editor.removeNode(conv.id, [marked!]);
      return true;
    });
  },
};
