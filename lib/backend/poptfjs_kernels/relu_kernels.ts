/**
 * `poptfjs.AddRelu` and `poptfjs.ReluGrad`: the passes around a `Relu` of a
 * training graph (the bias `Add` before it, and its gradient `dy · Step(x)`)
 * as single kernels, which the `AddReluFusion` and `ReluGradFusion` patterns
 * put in place. Here they are built from the backend's own kernels, so they
 * give that backend's numbers bit for bit; the wasm backend registers its own
 * one-pass versions (../wasm_kernels/relu_passes.ts), with the same numbers.
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../../common/errors.js';
import { callBackendKernel, type HostKernel } from './backend_kernel.js';

/** The kernel name of a bias `Add` and the `Relu` of its sum in one pass. */
export const ADD_RELU = 'poptfjs.AddRelu';
/** The kernel name of the gradient of a `Relu` in one pass. */
export const RELU_GRAD = 'poptfjs.ReluGrad';

/**
 * The length of the vector `b` repeats along `a` when `b` has `a`'s shape or
 * is broadcast along `a`'s last axes (its shape, without leading ones, ends
 * `a`'s shape), else undefined.
 */
export function trailingBroadcastLength(a: readonly number[], b: readonly number[]): number | undefined {
  const first = b.findIndex((d) => d !== 1);
  const kept = first < 0 ? [] : b.slice(first);
  if (b.length > a.length || kept.length > a.length) return undefined;
  const tail = a.slice(a.length - kept.length);
  return kept.every((d, i) => d === tail[i]) ? kept.reduce((n, d) => n * d, 1) : undefined;
}

/** Checks the inputs of `poptfjs.AddRelu`: float32, `b` the shape of `a` or broadcast along its last axes. */
export function checkAddReluInputs(a: tf.TensorInfo, b: tf.TensorInfo): number {
  const length = a.dtype === 'float32' && b.dtype === 'float32' ? trailingBroadcastLength(a.shape, b.shape) : undefined;
  if (length === undefined) {
    throw new PoptfjsError(
      `${ADD_RELU} takes float32 a and b with b of a's shape or broadcast along its last axes; got ${a.dtype}[${a.shape.join(',')}] and ${b.dtype}[${b.shape.join(',')}]`,
      { type: 'backend' },
    );
  }
  return length;
}

/** Checks the inputs of `poptfjs.ReluGrad`: float32 `dy` and `x` of one shape. */
export function checkReluGradInputs(dy: tf.TensorInfo, x: tf.TensorInfo): void {
  if (dy.dtype === 'float32' && x.dtype === 'float32' && dy.shape.join() === x.shape.join()) return;
  throw new PoptfjsError(`${RELU_GRAD} takes float32 dy and x of one shape; got ${dy.dtype}[${dy.shape.join(',')}] and ${x.dtype}[${x.shape.join(',')}]`, {
    type: 'backend',
  });
}

/** `poptfjs.AddRelu` as the backend's `Add`, then its `Relu` of the sum: returns [sum, relu]. */
export function addReluByKernels(backendName: string): tf.KernelFunc {
  return ({ inputs, backend }) => {
    const { a, b } = inputs as { a: tf.TensorInfo; b: tf.TensorInfo };
    checkAddReluInputs(a, b);
    const sum = callBackendKernel(backendName, tf.Add, { a, b }, {}, backend as tf.KernelBackend);
    return [sum, callBackendKernel(backendName, tf.Relu, { x: sum }, {}, backend as tf.KernelBackend)];
  };
}

/** `poptfjs.ReluGrad` as the backend's `Multiply` of `dy` and its `Step` of `x` (alpha 0), as tfjs's `Relu` gradient. */
export function reluGradByKernels(backendName: string): tf.KernelFunc {
  return ({ inputs, backend }) => {
    const { dy, x } = inputs as { dy: tf.TensorInfo; x: tf.TensorInfo };
    checkReluGradInputs(dy, x);
    const kernels = backend as tf.KernelBackend;
    const step = callBackendKernel(backendName, tf.Step, { x }, { alpha: 0 }, kernels);
    const out = callBackendKernel(backendName, tf.Multiply, { a: dy, b: step }, {}, kernels);
    kernels.disposeData(step.dataId);
    return out;
  };
}

/**
 * A bias `Add` and the `Relu` of its sum in one pass: inputs `a` and `b` (`b` the same shape as `a` or broadcast
 * along its last axes), outputs the sum `a + b` and `relu(a + b)`, as the backend's `Add` then `Relu` compute them.
 */
export const ADD_RELU_KERNEL: HostKernel = { kernelName: ADD_RELU, kernelFunc: addReluByKernels };

/** The gradient of a `Relu` in one pass: `dy · Step(x)` of `dy` and the `Relu`'s input `x`, as `Multiply(dy, Step(x))` computes it. */
export const RELU_GRAD_KERNEL: HostKernel = { kernelName: RELU_GRAD, kernelFunc: reluGradByKernels };
