/**
 * Fused kernels in a differentiable replay.
 *
 * tfjs records `_FusedMatMul`, `FusedConv2D` and `FusedDepthwiseConv2D` when
 * it fuses an op with its bias and activation; the kernels themselves have no
 * registered gradient (the `tf.fused.*` ops give them one through
 * `customGrad`). A differentiable replay therefore runs these nodes through
 * the `tf.fused.*` ops, which compute the same kernel and are differentiable.
 */
import * as tf from '@tensorflow/tfjs';
import type { Node } from '../ir/graph.js';

type FusedOp = (inputs: Record<string, tf.Tensor>, attrs: Record<string, unknown>) => tf.Tensor;

/** The arguments of `tf.fused.conv2d` and `tf.fused.depthwiseConv2d` from a fused convolution's inputs and attributes. */
function convolutionArguments(i: Record<string, tf.Tensor>, a: Record<string, unknown>) {
  return {
    x: i.x as tf.Tensor4D,
    filter: i.filter as tf.Tensor4D,
    strides: a.strides as [number, number],
    pad: a.pad as 'same',
    dataFormat: a.dataFormat as 'NHWC',
    dilations: a.dilations as [number, number],
    dimRoundingMode: a.dimRoundingMode as 'round',
    bias: i.bias,
    activation: a.activation as tf.fused.Activation,
    preluActivationWeights: i.preluActivationWeights,
    leakyreluAlpha: a.leakyreluAlpha as number,
  };
}

/** The fused op that computes each fused kernel differentiably. */
const FUSED_OPS: Record<string, FusedOp> = {
  _FusedMatMul: (i, a) =>
    tf.fused.matMul({
      a: i.a!,
      b: i.b!,
      transposeA: a.transposeA as boolean,
      transposeB: a.transposeB as boolean,
      bias: i.bias,
      activation: a.activation as tf.fused.Activation,
      preluActivationWeights: i.preluActivationWeights,
      leakyreluAlpha: a.leakyreluAlpha as number,
    }),
  FusedConv2D: (i, a) => tf.fused.conv2d(convolutionArguments(i, a)),
  FusedDepthwiseConv2D: (i, a) => tf.fused.depthwiseConv2d(convolutionArguments(i, a)),
};

/** A differentiable runner for a fused-kernel node, or undefined for other kernels. */
export function differentiableFusedRunner(node: Node): ((inputs: tf.Tensor[]) => tf.Tensor[]) | undefined {
  const op = FUSED_OPS[node.kernel];
  if (!op || !node.inputNames) return undefined;
  const names = node.inputNames;
  return (inputs) => {
    const named: Record<string, tf.Tensor> = {};
    names.forEach((n, k) => (named[n] = inputs[k]!));
    return [op(named, node.attrs as Record<string, unknown>)];
  };
}
