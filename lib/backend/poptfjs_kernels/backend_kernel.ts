/**
 * Running one of a backend's own kernels from inside another kernel, the
 * way poptfjs's kernels are built for every backend.
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../../common/errors.js';

/** Calls `kernelName` of backend `backendName` directly (no engine, no tape), as a kernel calls another kernel. */
export function callBackendKernel(
  backendName: string,
  kernelName: string,
  inputs: tf.NamedTensorInfoMap | tf.TensorInfo[],
  attrs: tf.NamedAttrMap,
  backend: tf.KernelBackend,
): tf.TensorInfo {
  const kernel = tf.getKernel(kernelName, backendName);
  if (!kernel) throw new PoptfjsError(`kernel '${kernelName}' is not registered for backend '${backendName}'`, { type: 'backend' });
  const out = kernel.kernelFunc({ inputs: inputs as tf.NamedTensorInfoMap, attrs, backend });
  if (Array.isArray(out)) throw new PoptfjsError(`kernel '${kernelName}' returned ${out.length} outputs where one was expected`, { type: 'backend' });
  return out;
}

/** A kernel poptfjs supplies for the backends it computes on: its name, its kernel function on a backend, and its gradient. */
export interface HostKernel {
  readonly kernelName: string;
  /** The kernel function on backend `backendName`. */
  readonly kernelFunc: (backendName: string) => tf.KernelFunc;
  /** Its gradient (tfjs's `GradConfig` of the kernel). */
  readonly gradient?: tf.GradConfig;
}

/** Registers `kernel` for each backend of `backendNames` that lacks it, and its gradient unless one is registered. */
export function registerHostKernel(kernel: HostKernel, backendNames: readonly string[]): void {
  for (const backendName of backendNames) {
    if (tf.getKernel(kernel.kernelName, backendName) !== undefined) continue;
    tf.registerKernel({ kernelName: kernel.kernelName, backendName, kernelFunc: kernel.kernelFunc(backendName) });
  }
  if (kernel.gradient && !tf.getGradient(kernel.kernelName)) tf.registerGradient(kernel.gradient);
}
