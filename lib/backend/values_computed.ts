/**
 * Small computations that need values while tfjs runs on the shape-only
 * backend: what an ONNX importer folds at import (a Reshape's shape computed
 * from a Shape node, say) is computed on tfjs's cpu backend, whose values can
 * be read, and the shape-only backend takes over again after.
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../common/errors.js';
import { SHAPE_ONLY_BACKEND } from './shape_only/backend_registration.js';
import { quietCpuBackend } from './tfjs_internals.js';

/** The backend the computations of {@link withValuesComputed} run on. */
const VALUES_BACKEND = 'cpu';

/**
 * Runs `fn` on tfjs's cpu backend when the shape-only backend is in use (else
 * as it is), switching back after, also when `fn` throws. `fn` must make its
 * own tensors: tensors of the shape-only backend have no values to compute on.
 */
export function withValuesComputed<T>(fn: () => T): T {
  const current = tf.getBackend();
  if (current !== SHAPE_ONLY_BACKEND) return fn();
  // Both backends are initialized, so tfjs switches at once (setBackend only waits to initialize a backend).
  void tf.setBackend(VALUES_BACKEND);
  if (tf.getBackend() !== VALUES_BACKEND) throw new PoptfjsError(`tfjs did not switch to its '${VALUES_BACKEND}' backend at once`, { type: 'backend' });
  quietCpuBackend(tf.backend());
  try {
    return fn();
  } finally {
    void tf.setBackend(current);
  }
}
