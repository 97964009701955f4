/**
 * Float16 partials (`opts.Precision.setPartialsType('half')`): matrix
 * multiplications and convolutions of float16 inputs keep their running sum
 * over the contracted dimension in float16 instead of float32.
 *
 * The emulation adds the contributions one slice of the contracted dimension
 * at a time and rounds the running sum to float16 after each addition: one
 * element of the inner dimension for a matmul, one input channel for a
 * convolution (the sum over a channel's kernel window is exact in float32).
 * Fused kernels add their bias and apply their activation to the sum, as the
 * fused kernel does.
 */
import * as tf from '@tensorflow/tfjs';
import type { Node } from '../ir/graph.js';
import type { Float16Rounding } from './float16_rounding.js';

/** Computes one kernel's output with float16 partials from its inputs (in the node's input order). */
type HalfPartialsKernel = (node: Node, inputs: Record<string, tf.Tensor>, rounding: Float16Rounding) => tf.Tensor;

/** Adds `parts` contributions with a float16 running sum. */
function sumInHalf(parts: number, contribution: (k: number) => tf.Tensor, rounding: Float16Rounding): tf.Tensor {
  let sum: tf.Tensor | undefined;
  for (let k = 0; k < parts; k++) {
    const part = contribution(k);
    const next = sum ? tf.add(sum, part) : part;
    if (sum) {
      sum.dispose();
      part.dispose();
    }
    sum = rounding.replace(next);
  }
  return sum!;
}

/** A size-1 slice of `t` at `index` along `axis`. */
function sliceAt(t: tf.Tensor, axis: number, index: number): tf.Tensor {
  const begin = t.shape.map((_, i) => (i === axis ? index : 0));
  const size = t.shape.map((d, i) => (i === axis ? 1 : d));
  return tf.slice(t, begin, size);
}

/** The bias and activation of a fused kernel, applied to `x` (per-channel tensors line up with the channels of a channels-first `x`). */
function fusedEpilogue(node: Node, x: tf.Tensor, inputs: Record<string, tf.Tensor>, channelsFirst: boolean): tf.Tensor {
  const perChannel = (t: tf.Tensor) => (channelsFirst && t.rank === 1 && t.shape[0] !== 1 ? tf.reshape(t, [t.shape[0]!, 1, 1]) : t);
  const y = inputs.bias ? tf.add(x, perChannel(inputs.bias)) : x;
  switch ((node.attrs.activation as string | undefined) ?? 'linear') {
    case 'linear':
      return y;
    case 'relu':
      return tf.relu(y);
    case 'relu6':
      return tf.relu6(y);
    case 'elu':
      return tf.elu(y);
    case 'sigmoid':
      return tf.sigmoid(y);
    case 'leakyrelu':
      return tf.leakyRelu(y, (node.attrs.leakyreluAlpha as number | undefined) ?? 0.2);
    case 'prelu':
      return tf.prelu(y, perChannel(inputs.preluActivationWeights!));
    default:
      throw new RangeError(`half partials: unknown fused activation '${String(node.attrs.activation)}' of ${node.kernel}`);
  }
}

function matMulInHalf(node: Node, inputs: Record<string, tf.Tensor>, rounding: Float16Rounding): tf.Tensor {
  const a = inputs.a!;
  const b = inputs.b!;
  const transposeA = node.attrs.transposeA === true;
  const transposeB = node.attrs.transposeB === true;
  const axisA = transposeA ? a.rank - 2 : a.rank - 1;
  const axisB = transposeB ? b.rank - 1 : b.rank - 2;
  const sum = sumInHalf(a.shape[axisA]!, (k) => tf.tidy(() => tf.matMul(sliceAt(a, axisA, k), sliceAt(b, axisB, k), transposeA, transposeB)), rounding);
  if (node.kernel === 'BatchMatMul') return sum;
  const out = tf.tidy(() => fusedEpilogue(node, sum, inputs, false));
  if (out !== sum) sum.dispose();
  return out;
}

function conv2dInHalf(node: Node, inputs: Record<string, tf.Tensor>, rounding: Float16Rounding): tf.Tensor {
  const x = inputs.x as tf.Tensor4D;
  const filter = inputs.filter as tf.Tensor4D;
  const attrs = node.attrs as {
    strides: [number, number] | number;
    pad: 'valid' | 'same' | number;
    dataFormat?: 'NHWC' | 'NCHW';
    dilations?: [number, number] | number;
    dimRoundingMode?: 'floor' | 'round' | 'ceil';
  };
  const channelsFirst = attrs.dataFormat === 'NCHW';
  const channelAxis = channelsFirst ? 1 : 3;
  const sum = sumInHalf(
    x.shape[channelAxis]!,
    (c) =>
      tf.tidy(() =>
        tf.conv2d(
          sliceAt(x, channelAxis, c) as tf.Tensor4D,
          sliceAt(filter, 2, c) as tf.Tensor4D,
          attrs.strides,
          attrs.pad,
          attrs.dataFormat ?? 'NHWC',
          attrs.dilations ?? 1,
          attrs.dimRoundingMode ?? undefined,
        ),
      ),
    rounding,
  );
  if (node.kernel === 'Conv2D') return sum;
  const out = tf.tidy(() => fusedEpilogue(node, sum, inputs, channelsFirst));
  if (out !== sum) sum.dispose();
  return out;
}

/** The kernels computed with float16 partials, by kernel name. */
const HALF_PARTIALS_KERNELS: Readonly<Record<string, HalfPartialsKernel>> = {
  BatchMatMul: matMulInHalf,
  _FusedMatMul: matMulInHalf,
  Conv2D: conv2dInHalf,
  FusedConv2D: conv2dInHalf,
};

/** True if `kernel` accumulates partial sums that `setPartialsType('half')` keeps in float16. */
export function hasHalfPartials(kernel: string): boolean {
  return kernel in HALF_PARTIALS_KERNELS;
}

/** Runs `node` (a kernel for which {@link hasHalfPartials} holds) with float16 partials. */
export function runWithHalfPartials(node: Node, inputs: readonly tf.Tensor[], rounding: Float16Rounding): tf.Tensor {
  const named: Record<string, tf.Tensor> = {};
  node.inputNames!.forEach((name, i) => (named[name] = inputs[i]!));
  return HALF_PARTIALS_KERNELS[node.kernel]!(node, named, rounding);
}
