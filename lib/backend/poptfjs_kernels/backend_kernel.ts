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

/** Registers the kernel made by `make(backendName)` for each backend of `backendNames` that lacks it. */
export function registerForBackends(kernelName: string, backendNames: readonly string[], make: (backendName: string) => tf.KernelFunc): void {
  for (const backendName of backendNames) {
    if (tf.getKernel(kernelName, backendName) !== undefined) continue;
    tf.registerKernel({ kernelName, backendName, kernelFunc: make(backendName) });
  }
}
