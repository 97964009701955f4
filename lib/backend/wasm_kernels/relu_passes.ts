/**
 * `poptfjs.AddRelu` and `poptfjs.ReluGrad` on the wasm backend, each one
 * pass over the heap by a WebAssembly SIMD routine (relu_passes_simd.ts)
 * with the numbers of the backend's `Add` then `Relu`, and `Step` then
 * `Multiply`: a small CNN's bias add and relu of [64, 28, 28, 16] take one
 * pass instead of two, and its relu gradient one instead of two. Where the
 * routines cannot run, the backend's own kernels compute them.
 */
import type * as tf from '@tensorflow/tfjs';
import '@tensorflow/tfjs-backend-wasm';
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';
import { ADD_RELU, addReluByKernels, checkAddReluInputs, checkReluGradInputs, RELU_GRAD, reluGradByKernels } from '../poptfjs_kernels/relu_kernels.js';
import { addReluSimd, reluGradSimd } from './relu_passes_simd.js';
import { wasmMemory } from './wasm_simd_routine.js';

const BACKEND = 'wasm';

const addReluOwnKernels = addReluByKernels(BACKEND);
const reluGradOwnKernels = reluGradByKernels(BACKEND);

/** The byte address of a tensor's data in the wasm heap. */
const address = (backend: BackendWasm, t: tf.TensorInfo): number => backend.typedArrayFromHeap(t).byteOffset;

function addRelu(args: Parameters<tf.KernelFunc>[0]): tf.TensorInfo[] {
  const { a, b } = args.inputs as { a: tf.TensorInfo; b: tf.TensorInfo };
  const length = checkAddReluInputs(a, b);
  const backend = args.backend as BackendWasm;
  const sum = backend.makeOutput(a.shape, 'float32');
  const relu = backend.makeOutput(a.shape, 'float32');
  const elements = a.shape.reduce((n, d) => n * d, 1);
  const rows = length === 0 ? 0 : elements / length;
  if (addReluSimd(wasmMemory(backend), address(backend, a), address(backend, b), address(backend, sum), address(backend, relu), rows, length)) return [sum, relu];
  backend.disposeData(sum.dataId);
  backend.disposeData(relu.dataId);
  return addReluOwnKernels(args) as tf.TensorInfo[];
}

function reluGrad(args: Parameters<tf.KernelFunc>[0]): tf.TensorInfo {
  const { dy, x } = args.inputs as { dy: tf.TensorInfo; x: tf.TensorInfo };
  checkReluGradInputs(dy, x);
  const backend = args.backend as BackendWasm;
  const out = backend.makeOutput(dy.shape, 'float32');
  const count = dy.shape.reduce((n, d) => n * d, 1);
  if (reluGradSimd(wasmMemory(backend), address(backend, dy), address(backend, x), address(backend, out), count)) return out;
  backend.disposeData(out.dataId);
  return reluGradOwnKernels(args) as tf.TensorInfo;
}

/** The wasm kernel of `poptfjs.AddRelu`: one SIMD pass writing the sum and its relu. */
export const addReluConfig: tf.KernelConfig = { kernelName: ADD_RELU, backendName: BACKEND, kernelFunc: addRelu };

/** The wasm kernel of `poptfjs.ReluGrad`: one SIMD pass writing `dy · Step(x)`. */
export const reluGradConfig: tf.KernelConfig = { kernelName: RELU_GRAD, backendName: BACKEND, kernelFunc: reluGrad };
