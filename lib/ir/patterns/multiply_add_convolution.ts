/**
 * The `MultiplyAddConvolution` pattern: in inference graphs on the wasm
 * backend, where the engine has WebAssembly relaxed SIMD, the convolutions
 * (`FusedConv2D`) are marked to run as one product of their windows and the
 * filter with fused multiply-adds, 3 × 3 ones at stride 1 by Winograd's
 * F(2 × 2, 3 × 3) (../../backend/wasm_kernels/fused_conv2d.ts), instead of
 * XNNPACK's separate multiplies and adds. Fused multiply-adds
 * round each sum once instead of twice, as onnxruntime's and PyTorch's CPU
 * kernels do, so the outputs move in their last bits; training graphs keep
 * tfjs's numbers and are left alone.
 *
 * The product's helper thread and XNNPACK's pool would take turns for the
 * second core (XNNPACK's threads spin-wait after each of its kernels), so a
 * graph is marked whole or not at all, and a marked graph keeps the pool off
 * (wasm_thread_pool.ts). It is marked when the product computes each of its
 * convolutions faster, and no other convolution or matrix product of it
 * needs the pool:
 * - each convolution has {@link MIN_ROWS} output positions or more: with
 *   fewer, the product is about even with XNNPACK (2 threads, ResNet-18 at
 *   64 × 64: 2 × 2 × 512 → 512 3 × 3 0.35 against 0.35 ms, 8 × 8 × 128 →
 *   128 0.29 against 0.28, its 7 × 7 first one 0.34 against 0.29), and
 *   that session, marked, ran no faster beside onnxruntime (5.9-6.6 against
 *   5.9-7.3 ms);
 * - every other convolution or product does less than
 *   {@link MAX_OTHER_FLOPS} (mobilenet_v2's depthwise convolutions would run
 *   on one thread).
 *
 * SqueezeNet 1.1's session (224 × 224, 2 threads): 11.2-12.8 → 8.0-8.2 ms
 * a run beside onnxruntime. ResNet-18's, marked with every convolution by
 * the product or F(2 × 2, 3 × 3) and its classifier on one thread, ran 7.2
 * against 6.9 ms unmarked: its 2 × 2 × 512 → 512 convolutions, one tile
 * each, take 0.38 ms by F(2 × 2, 3 × 3), where XNNPACK takes 0.29.
 */
import type { Graph, Node, Value, ValueId } from '../graph.js';
import { MULTIPLY_ADD_ACTIVATIONS, MULTIPLY_ADD_ATTRIBUTE, asksFusedMultiplyAdd } from '../../backend/multiply_add_attribute.js';
import { relaxedSimdSupported } from '../../backend/wasm_kernels/wasm_simd_routine.js';
import { nodeCost } from '../node_cost.js';
import { rewriteInferenceNodes } from './inference_rewrite.js';
import type { Pattern } from './pattern.js';

/** The fewest output positions (batch × height × width) of a convolution of a marked graph. */
export const MIN_ROWS = 128;

/** The most FLOPs of a convolution or matrix product of a marked graph that the product does not compute. */
export const MAX_OTHER_FLOPS = 1e6;

const ones = (v: unknown) => v === undefined || v === 1 || (Array.isArray(v) && v.every((d) => d === 1));

/** Whether the product computes `node`: a float32 NHWC `FusedConv2D` without dilation, a linear or relu activation, a per-channel bias or none, output channels in fours. */
function computedByProduct(value: (id: ValueId) => Value, node: Node): boolean {
  const { dataFormat, dilations, activation } = node.attrs as Record<string, unknown>;
  if (node.kernel !== 'FusedConv2D' || dataFormat !== 'NHWC' || !ones(dilations) || !MULTIPLY_ADD_ACTIVATIONS.has((activation as string | undefined) ?? 'linear'))
    return false;
  const names = node.inputNames?.join();
  if ((names !== 'x,filter' && names !== 'x,filter,bias') || node.outputs.length !== 1) return false;
  const [x, filter, bias] = node.inputs.map(value);
  const out = value(node.outputs[0]!);
  if ([x!, filter!, out, ...(bias ? [bias] : [])].some((v) => v.dtype !== 'float32' || v.precision === 'float16')) return false;
  const outChannels = filter!.shape[3]!;
  return outChannels % 4 === 0 && (bias === undefined || (bias.shape.length === 1 && bias.shape[0] === outChannels));
}

/** Whether every convolution of `graph` is computed by the product with enough rows, and nothing else needs the pool. */
function worthMarking(graph: Graph): boolean {
  let convolutions = 0;
  for (const node of graph.nodes) {
    if (computedByProduct((id) => graph.values[id]!, node)) {
      const out = graph.values[node.outputs[0]!]!.shape;
      if (out[0]! * out[1]! * out[2]! < MIN_ROWS) return false;
      convolutions++;
    } else if (/Conv2D|Conv2d|MatMul/.test(node.kernel) && nodeCost(graph, node).flops > MAX_OTHER_FLOPS) {
      return false;
    }
  }
  return convolutions > 0;
}

/** Marks the convolutions of inference graphs on wasm to run with fused multiply-adds, where that is faster. */
export const multiplyAddConvolution: Pattern = {
  name: 'MultiplyAddConvolution',
  description: 'marks the convolutions of inference graphs on wasm to run as products of their windows with fused multiply-adds (WebAssembly relaxed SIMD)',
  level: 'Default',
  apply: (graph, context) => {
    if (context.backend !== 'wasm' || context.training || graph.nodes.some((n) => asksFusedMultiplyAdd(n.attrs))) return { graph, count: 0 };
    if (!relaxedSimdSupported() || !worthMarking(graph)) return { graph, count: 0 };
    return rewriteInferenceNodes(graph, context, (editor, uses, conv) => {
      if (!computedByProduct((id) => editor.value(id), conv)) return false;
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
