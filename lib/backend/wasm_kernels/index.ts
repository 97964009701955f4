/**
 * The training kernels the tfjs wasm backend lacks, built from its own fast
 * (XNNPACK and C++) kernels, so that convolutional nets and embeddings can
 * train on wasm.
 */
import * as tf from '@tensorflow/tfjs';
import { conv2DBackpropFilterConfig } from './conv2d_backprop_filter.js';
import { depthwiseConv2dNativeBackpropFilterConfig } from './depthwise_conv2d_native_backprop_filter.js';
import { depthwiseConv2dNativeBackpropInputConfig } from './depthwise_conv2d_native_backprop_input.js';
import { unsortedSegmentSumConfig } from './unsorted_segment_sum.js';

/** The kernels this module can add to the wasm backend. */
const WASM_TRAINING_KERNELS: readonly tf.KernelConfig[] = [
  conv2DBackpropFilterConfig,
  depthwiseConv2dNativeBackpropFilterConfig,
  depthwiseConv2dNativeBackpropInputConfig,
  unsortedSegmentSumConfig,
];

/**
 * Registers each training kernel (`Conv2DBackpropFilter`,
 * `DepthwiseConv2dNativeBackpropFilter`, `DepthwiseConv2dNativeBackpropInput`,
 * `UnsortedSegmentSum`) the wasm backend does not already have, so a later
 * tfjs that ships its own keeps it, and returns the names of the kernels this
 * call registered. Calling it again registers nothing. It does not need the
 * wasm backend to be initialised.
 */
export function registerWasmTrainingKernels(): string[] {
  const registered: string[] = [];
  for (const config of WASM_TRAINING_KERNELS) {
    if (tf.getKernel(config.kernelName, config.backendName) !== undefined) continue;
    tf.registerKernel(config);
    registered.push(config.kernelName);
  }
  return registered;
}
