/**
 * The names of every kernel registered in tfjs, for any backend.
 *
 * tfjs's public API lists the kernels of one backend by name
 * (`tf.getKernelsForBackend`), and a backend's kernels can be registered
 * without its factory (tfjs registers the webgl kernels in Node.js), so the
 * complete list is read from tfjs's global kernel registry
 * (`_tfGlobals.kernelRegistry`, a `Map` keyed `<backend>_<kernel>` in tfjs
 * 4.22).
 */
import type * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../../common/errors.js';

const KERNEL_REGISTRY = 'kernelRegistry';

/** The names of the kernels registered for any backend. */
export function registeredKernelNames(): Set<string> {
  const globals = (globalThis as { _tfGlobals?: Map<string, unknown> })._tfGlobals;
  const registry = globals?.get(KERNEL_REGISTRY);
  if (!(registry instanceof Map)) {
    throw new PoptfjsError(`tfjs's global kernel registry (_tfGlobals.${KERNEL_REGISTRY}) was not found: this tfjs is not laid out as 4.22 is`, { type: 'backend' });
  }
  return new Set([...(registry as Map<string, tf.KernelConfig>).values()].map((config) => config.kernelName));
}
