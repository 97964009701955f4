/**
 * Training kernels for the tfjs wasm backend, built from its own fast
 * (XNNPACK and C++) kernels, so that convolutional nets and embeddings
 * train on wasm, and train fast.
 *
 * Two lists:
 * - the kernels the wasm backend lacks (`Conv2DBackpropFilter`, the
 *   depthwise backprops, `UnsortedSegmentSum`), added when missing, so that a
 *   later tfjs that ships its own keeps it, and poptfjs's one-pass
 *   `poptfjs.AddRelu` and `poptfjs.ReluGrad`;
 * - {@link WASM_KERNEL_OVERRIDES}, kernels the wasm backend has but runs as
 *   naive loops, replaced by ours (`tf.unregisterKernel` then
 *   `tf.registerKernel`): `Conv2DBackpropInput` (a plain loop: 50-80 ms
 *   against 5 ms as an XNNPACK convolution on a small CNN's second layer),
 *   `MaxPoolGrad` (20-40 ms against about 1 ms) and `AvgPoolGrad` (8 ms
 *   against about 1 ms), and `BatchMatMul`, whose batched and transposed
 *   products run a plain loop (0.8 ms against 0.07 ms by a SIMD routine
 *   for a transformer's `[4, 64, 64]` attention product),
 *   `Slice`, which copied its whole input to keep a part of it, and
 *   `Concat`, which copied its inputs part of a row at a time, and
 *   `Transpose`, run on merged axes, and `FusedConv2D`, which computes the
 *   nodes the `MultiplyAddConvolution` pattern marks with fused
 *   multiply-adds (fused_conv2d.ts), and `FusedDepthwiseConv2D`, which
 *   computes marked 3 × 3 depthwise ones the same way
 *   (fused_depthwise_conv2d.ts), and `_FusedMatMul`, which computes
 *   marked products of a weight matrix the same way (fused_mat_mul.ts), and `MaxPool`, on two threads while
 *   XNNPACK's pool is left to poptfjs's routines (max_pool.ts), and `GatherV2`, whose gathers with batch
 *   dimensions read other samples' indices (gather_v2.ts). Each gives the cpu backend's results
 *   (tested over strides, paddings, formats, ties, transposes, broadcast
 *   batches, slice bounds, concatenation axes and permutations).
 */
import * as tf from '@tensorflow/tfjs';
import { avgPoolGradConfig } from './avg_pool_grad.js';
import { batchMatMulConfig } from './batch_mat_mul.js';
import { concatConfig } from './concat.js';
import { conv2DBackpropFilterConfig } from './conv2d_backprop_filter.js';
import { conv2DBackpropInputConfig } from './conv2d_backprop_input.js';
import { depthwiseConv2dNativeBackpropFilterConfig } from './depthwise_conv2d_native_backprop_filter.js';
import { depthwiseConv2dNativeBackpropInputConfig } from './depthwise_conv2d_native_backprop_input.js';
import { fusedConv2DConfig } from './fused_conv2d.js';
import { fusedDepthwiseConv2DConfig } from './fused_depthwise_conv2d.js';
import { fusedMatMulConfig } from './fused_mat_mul.js';
import { gatherV2Config } from './gather_v2.js';
import { maxPoolConfig } from './max_pool.js';
import { maxPoolGradConfig } from './max_pool_grad.js';
import { addReluConfig, reluGradConfig } from './relu_passes.js';
import { sliceConfig } from './slice.js';
import { transposeConfig } from './transpose.js';
import { unsortedSegmentSumConfig } from './unsorted_segment_sum.js';

/** The kernels this module adds to the wasm backend where it has none. */
const WASM_MISSING_KERNELS: readonly tf.KernelConfig[] = [
  conv2DBackpropFilterConfig,
  depthwiseConv2dNativeBackpropFilterConfig,
  depthwiseConv2dNativeBackpropInputConfig,
  unsortedSegmentSumConfig,
  addReluConfig,
  reluGradConfig,
];

/** The kernels this module registers in place of the wasm backend's own, slower ones. */
export const WASM_KERNEL_OVERRIDES: readonly tf.KernelConfig[] = [
  conv2DBackpropInputConfig,
  maxPoolGradConfig,
  avgPoolGradConfig,
  batchMatMulConfig,
  sliceConfig,
  concatConfig,
  transposeConfig,
  fusedConv2DConfig,
  fusedDepthwiseConv2DConfig,
  fusedMatMulConfig,
  maxPoolConfig,
  gatherV2Config,
];

/** The kernels the overrides replaced, by kernel name. */
const replaced = new Map<string, tf.KernelConfig>();

/**
 * The wasm backend's own kernels that {@link WASM_KERNEL_OVERRIDES}
 * replaced, by kernel name, for comparisons (the benchmarks). Such a kernel
 * needs its `setupFunc` run on the wasm backend before use when it was
 * replaced before the backend was initialised.
 */
export function replacedWasmKernels(): ReadonlyMap<string, tf.KernelConfig> {
  return replaced;
}

/**
 * Registers the training kernels on the wasm backend and returns the names
 * of the kernels this call registered: each missing kernel of the first list
 * (one the backend already has is kept), and each override of
 * {@link WASM_KERNEL_OVERRIDES} in place of whatever is registered under its
 * name. Calling it again registers nothing. It does not need the wasm
 * backend to be initialised; the overridden kernels' setup functions are not
 * needed by any other wasm kernel.
 */
export function registerWasmTrainingKernels(): string[] {
  const registered: string[] = [];
  for (const config of WASM_MISSING_KERNELS) {
    if (tf.getKernel(config.kernelName, config.backendName) !== undefined) continue;
    tf.registerKernel(config);
    registered.push(config.kernelName);
  }
  for (const config of WASM_KERNEL_OVERRIDES) {
    const current = tf.getKernel(config.kernelName, config.backendName);
    if (current?.kernelFunc === config.kernelFunc) continue;
    if (current !== undefined) {
      replaced.set(config.kernelName, current);
      tf.unregisterKernel(config.kernelName, config.backendName);
    }
    tf.registerKernel(config);
    registered.push(config.kernelName);
  }
  return registered;
}
