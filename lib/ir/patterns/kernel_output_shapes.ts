/**
 * Output shapes of the kernels that patterns insert (`Transpose`,
 * `BatchMatMul`, broadcasting binary kernels, `Conv2D`,
 * `DepthwiseConv2dNative`), computed the way the tfjs kernels compute them.
 */
import * as tf from '@tensorflow/tfjs';
import type { AttrValue } from '../graph.js';

/** True if two shapes are equal. */
export function sameShape(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

/** The shape of `Transpose(x)` with permutation `perm`. */
export function transposeShape(shape: readonly number[], perm: readonly number[]): number[] {
  return perm.map((axis) => shape[axis]!);
}

/** The permutation that swaps the last two axes of a tensor of rank `rank` (≥ 2). */
export function swapLastTwoAxes(rank: number): number[] {
  const perm = Array.from({ length: rank }, (_, i) => i);
  perm[rank - 2] = rank - 1;
  perm[rank - 1] = rank - 2;
  return perm;
}

/** The shape two shapes broadcast to (numpy rules); throws if they do not broadcast. */
export function broadcastShape(a: readonly number[], b: readonly number[]): number[] {
  return tf.backend_util.assertAndGetBroadcastShape([...a], [...b]);
}

/** The shape of `BatchMatMul(a, b)` with the given transposes: broadcast batch dims, then rows × columns. */
export function matMulShape(a: readonly number[], b: readonly number[], transposeA: boolean, transposeB: boolean): number[] {
  const rows = transposeA ? a[a.length - 1]! : a[a.length - 2]!;
  const columns = transposeB ? b[b.length - 2]! : b[b.length - 1]!;
  return [...broadcastShape(a.slice(0, -2), b.slice(0, -2)), rows, columns];
}

/** The convolution attributes of `Conv2D`, `DepthwiseConv2dNative` and their fused forms. */
interface ConvolutionAttrs {
  readonly strides: number | [number, number];
  readonly pad: 'valid' | 'same' | number | tf.backend_util.ExplicitPadding;
  readonly dataFormat?: 'NHWC' | 'NCHW';
  readonly dilations?: number | [number, number];
  readonly dimRoundingMode?: 'floor' | 'round' | 'ceil';
}

/** The shape of a 2-D convolution (`depthwise` for `DepthwiseConv2dNative`) of a rank-4 `x` with `filter`. */
export function conv2dShape(x: readonly number[], filter: readonly number[], attrs: Readonly<Record<string, AttrValue>>, depthwise: boolean): number[] {
  const conv = attrs as unknown as ConvolutionAttrs;
  const info = tf.backend_util.computeConv2DInfo(
    x as [number, number, number, number],
    filter as [number, number, number, number],
    conv.strides,
    conv.dilations ?? 1,
    conv.pad,
    conv.dimRoundingMode,
    depthwise,
    tf.backend_util.convertConv2DDataFormat(conv.dataFormat ?? 'NHWC'),
  );
  return info.outShape;
}
