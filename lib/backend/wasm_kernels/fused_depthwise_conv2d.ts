/**
 * `FusedDepthwiseConv2D` for the wasm backend: the backend's own (XNNPACK),
 * or, for a node the `MultiplyAddConvolution` pattern marked, poptfjs's SIMD
 * routine (depthwise_conv2d_simd.ts), which shares its output rows with the
 * helper thread of simd_routine_threads.ts: a marked graph leaves the second
 * core to poptfjs's routines, where XNNPACK's kernel would run on one
 * thread.
 */
import * as tf from '@tensorflow/tfjs';
import '@tensorflow/tfjs-backend-wasm';
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';
import type { KernelCallShapes } from '../kernel_call_shapes.js';
import { asksFusedMultiplyAdd, isColumnBias, MULTIPLY_ADD_ACTIVATIONS, type MultiplyAddActivation } from '../multiply_add_attribute.js';
import { OwnWasmKernel } from './own_wasm_kernel.js';
import { depthwiseConv2dSimd, depthwiseConv2dSimdFits } from './depthwise_conv2d_simd.js';
import { wasmMemory } from './wasm_simd_routine.js';

const BACKEND = 'wasm';

/** The wasm backend's own `FusedDepthwiseConv2D` (registered by the import above), which this kernel replaces and calls. */
const OWN_FUSED_DEPTHWISE_CONV2D = new OwnWasmKernel(tf.FusedDepthwiseConv2D);

/** The depthwise convolution of a marked node when the routine computes it: its windows and activation. */
function markedDepthwise(args: KernelCallShapes): { info: tf.backend_util.Conv2DInfo; activation: MultiplyAddActivation } | undefined {
  const { x, filter, bias, preluActivationWeights } = args.inputs;
  const attrs = args.attrs as unknown as tf.FusedDepthwiseConv2DAttrs & Record<string, unknown>;
  if (!asksFusedMultiplyAdd(attrs) || x === undefined || filter === undefined || preluActivationWeights !== undefined) return undefined;
  const activation = attrs.activation ?? 'linear';
  if (x.dtype !== 'float32' || filter.dtype !== 'float32' || attrs.dataFormat !== 'NHWC' || !MULTIPLY_ADD_ACTIVATIONS.has(activation)) return undefined;
  const info = tf.backend_util.computeConv2DInfo(
    x.shape as [number, number, number, number],
    filter.shape as [number, number, number, number],
    attrs.strides,
    attrs.dilations ?? 1,
    attrs.pad,
    attrs.dimRoundingMode,
    true,
    'channelsLast',
  );
  if (!depthwiseConv2dSimdFits(info) || !isColumnBias(bias, info.outChannels)) return undefined;
  return { info, activation: activation as MultiplyAddActivation };
}

/** Whether the routine computes the marked `FusedDepthwiseConv2D` call `args` (where the engine has relaxed SIMD). */
export function computesMarkedDepthwise(args: KernelCallShapes): boolean {
  return markedDepthwise(args) !== undefined;
}

function fusedDepthwiseConv2D(args: Parameters<tf.KernelFunc>[0]): tf.TensorInfo | tf.TensorInfo[] {
  const marked = markedDepthwise(args);
  if (marked === undefined) return OWN_FUSED_DEPTHWISE_CONV2D.get().kernelFunc(args);
  const wasm = args.backend as BackendWasm;
  const { x, filter, bias } = args.inputs as { x: tf.TensorInfo; filter: tf.TensorInfo; bias?: tf.TensorInfo };
  const { info } = marked;
  const address = (t: tf.TensorInfo) => wasm.typedArrayFromHeap(t).byteOffset;
  const zero = wasm.makeOutput([info.inChannels], 'float32');
  const out = wasm.makeOutput([info.batchSize, info.outHeight, info.outWidth, info.outChannels], 'float32');
  let done = false;
  try {
    (wasm.typedArrayFromHeap(zero) as Float32Array).fill(0);
    const at = { x: address(x), filter: address(filter), ...(bias ? { bias: address(bias) } : {}), zero: address(zero), out: address(out) };
    done = depthwiseConv2dSimd(wasmMemory(wasm), info, at, marked.activation);
  } finally {
    wasm.disposeData(zero.dataId);
    if (!done) wasm.disposeData(out.dataId);
  }
  return done ? out : OWN_FUSED_DEPTHWISE_CONV2D.get().kernelFunc(args);
}

/** The wasm kernel of `FusedDepthwiseConv2D`: poptfjs's routine for marked nodes where the engine has relaxed SIMD, the backend's own otherwise. */
export const fusedDepthwiseConv2DConfig: tf.KernelConfig = {
  kernelName: tf.FusedDepthwiseConv2D,
  backendName: BACKEND,
  kernelFunc: fusedDepthwiseConv2D,
  setupFunc: (backend) => OWN_FUSED_DEPTHWISE_CONV2D.setup(backend),
};
