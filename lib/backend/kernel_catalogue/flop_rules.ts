/**
 * The FLOPs of a kernel call, the work the reports and the planners count:
 * matrix products and convolutions two FLOPs per multiply-accumulate;
 * element-wise kernels one FLOP per output element (transcendental functions
 * a few); reductions one per input element; data movement none. Counts depend
 * only on shapes, so they are exact for a static graph.
 */
import { inputElements, outputElements, poolingWindow } from './cost_rules.js';
import type { FlopRule } from './kernel_record.js';

/** FLOPs a transcendental function (exp, log, tanh, ...) counts per element. */
export const TRANSCENDENTAL_FLOPS = 4;

/** No arithmetic: data movement, views, copies. */
export const noFlops: FlopRule = () => 0;

/** `n` FLOPs per output element. */
export function flopsPerOutput(n: number): FlopRule {
  return (node) => n * outputElements(node);
}

/** One FLOP per input element (a reduction adds each element once). */
export const flopsPerInput: FlopRule = inputElements;

/** A matrix product: two per multiply-accumulate, `k` of them per output element. */
export const matMulFlops: FlopRule = (node) => {
  const a = node.input('a', 0).shape;
  const k = node.attrs.transposeA === true ? a[a.length - 2]! : a[a.length - 1]!;
  return 2 * k * node.outputs[0]!.elements;
};

/** Multiply-accumulates of a convolution, from its filter and the larger of its image-shaped tensors. */
export const convolutionFlops: FlopRule = (node) => {
  const filter =
    node.kernel.startsWith('Conv2DBackpropFilter') || node.kernel.startsWith('DepthwiseConv2dNativeBackpropFilter')
      ? ((node.attrs.filterShape as number[] | undefined) ?? node.outputs[0]!.shape)
      : node.input('filter', 1).shape;
  const depthwise = node.kernel.includes('Depthwise');
  const [kh = 1, kw = 1, inChannels = 1] = filter;
  const perOutput = depthwise ? kh * kw : kh * kw * inChannels;
  // The "output" whose every element costs `perOutput` MACs: the forward output, or dy for the gradients.
  const spatial = node.hasInput('dy') ? node.input('dy', 0).shape : node.outputs[0]!.shape;
  return 2 * perOutput * spatial.reduce((a, b) => a * b, 1);
};

/** Pooling: each output element reads its window. */
export const poolingFlops: FlopRule = (node) => poolingWindow(node) * node.outputs[0]!.elements;
