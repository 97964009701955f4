/**
 * The shape-only backend's registration in tfjs, done when poptfjs is
 * imported.
 *
 * Its priority is below every tfjs backend (cpu 1, wasm and webgl 2,
 * tensorflow 3), so tfjs never picks it by itself, and poptfjs's own choice
 * (`initBackend`) names its backends explicitly: it is used only when asked
 * for, by `withShapeOnlyBackend` or `tf.setBackend(SHAPE_ONLY_BACKEND)`.
 */
import * as tf from '@tensorflow/tfjs';
import { registerShapeOnlyKernels } from './kernel_registration.js';
import { ShapeOnlyBackend } from './shape_only_backend.js';

/** The name of the shape-only backend in tfjs's registry. */
export const SHAPE_ONLY_BACKEND = 'poptfjs-shape-only';

/** The shape-only backend's priority in tfjs: below every backend tfjs ships, so it is never chosen automatically. */
export const SHAPE_ONLY_BACKEND_PRIORITY = -1;

/**
 * Registers the shape-only backend (once) and its kernels: one for each
 * kernel name registered in tfjs so far. Calling it again registers the
 * kernels other backends registered since.
 */
export function registerShapeOnlyBackend(): void {
  if (tf.findBackendFactory(SHAPE_ONLY_BACKEND) === null) {
    tf.registerBackend(SHAPE_ONLY_BACKEND, () => new ShapeOnlyBackend(), SHAPE_ONLY_BACKEND_PRIORITY);
  }
  registerShapeOnlyKernels(SHAPE_ONLY_BACKEND);
}

registerShapeOnlyBackend();
