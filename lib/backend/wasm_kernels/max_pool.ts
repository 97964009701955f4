/**
 * `MaxPool` for the wasm backend: the backend's own (XNNPACK), or, while a
 * graph of poptfjs's routines keeps XNNPACK's pool off
 * (wasm_thread_pool.ts), the SIMD routine of max_pool_simd.ts, which shares
 * its rows with the routines' helper thread where XNNPACK would compute on
 * the calling thread alone: SqueezeNet 1.1's three poolings take 0.68 ms on
 * one thread, about 0.4 on two. Both give the largest value of each window
 * (NaN aside: the routine never picks one).
 */
import * as tf from '@tensorflow/tfjs';
import '@tensorflow/tfjs-backend-wasm';
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';
import { routinesOnlyOnWasmThreads } from '../wasm_thread_pool.js';
import { OwnWasmKernel } from './own_wasm_kernel.js';
import { maxPoolSimd, maxPoolSimdFits } from './max_pool_simd.js';
import { wasmMemory } from './wasm_simd_routine.js';

const BACKEND = 'wasm';

/** The wasm backend's own `MaxPool` (registered by the import above), which this kernel replaces and calls. */
const OWN_MAX_POOL = new OwnWasmKernel(tf.MaxPool);

/** The pooling by the SIMD routine; undefined (nothing left allocated) where it does not run. */
function byRoutine(args: Parameters<tf.KernelFunc>[0]): tf.TensorInfo | undefined {
  const { x } = args.inputs as { x: tf.TensorInfo };
  const { filterSize, strides, pad, dimRoundingMode } = args.attrs as unknown as tf.MaxPoolAttrs;
  if (!routinesOnlyOnWasmThreads() || x.dtype !== 'float32' || x.shape.length !== 4) return undefined;
  const info = tf.backend_util.computePool2DInfo(x.shape as [number, number, number, number], filterSize, strides, 1, pad, dimRoundingMode);
  if (!maxPoolSimdFits(info)) return undefined;
  const wasm = args.backend as BackendWasm;
  const out = wasm.makeOutput(info.outShape, 'float32');
  if (maxPoolSimd(wasmMemory(wasm), info, wasm.typedArrayFromHeap(x).byteOffset, wasm.typedArrayFromHeap(out).byteOffset)) return out;
  wasm.disposeData(out.dataId);
  return undefined;
}

/** The wasm kernel of `MaxPool`: poptfjs's routine while XNNPACK's pool is left to the routines, the backend's own otherwise. */
export const maxPoolConfig: tf.KernelConfig = {
  kernelName: tf.MaxPool,
  backendName: BACKEND,
  kernelFunc: (args) => byRoutine(args) ?? OWN_MAX_POOL.get().kernelFunc(args),
  setupFunc: (backend) => OWN_MAX_POOL.setup(backend),
};
