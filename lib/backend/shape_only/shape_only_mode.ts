/**
 * Running code on the shape-only backend: {@link withShapeOnlyBackend}.
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../../common/errors.js';
import { registerShapeOnlyBackend, SHAPE_ONLY_BACKEND } from './backend_registration.js';
import { createWithoutValues } from './value_free_creation.js';

/** What a session changed in tfjs: the backend in use before, and the function that undoes {@link createWithoutValues}. */
interface SwitchedBackend {
  readonly previous: string;
  readonly undoValueFree: () => void;
}

/** The calls of {@link withShapeOnlyBackend} running at once, and the backend to restore after the last. */
interface ShapeOnlySession {
  running: number;
  /** Resolves once tfjs uses the shape-only backend. */
  readonly switched: Promise<SwitchedBackend>;
}

let session: ShapeOnlySession | undefined;
/** The switch back to the previous backend after the last session, which a new session waits for. */
let restoring: Promise<void> = Promise.resolve();

async function switchToShapeOnly(): Promise<SwitchedBackend> {
  await restoring;
  registerShapeOnlyBackend();
  await tf.ready();
  const previous = tf.getBackend();
  if (!(await tf.setBackend(SHAPE_ONLY_BACKEND))) {
    throw new PoptfjsError(`tfjs could not switch to the '${SHAPE_ONLY_BACKEND}' backend`, { type: 'backend' });
  }
  return { previous, undoValueFree: createWithoutValues() };
}

async function restore(switched: Promise<SwitchedBackend>): Promise<void> {
  const done = await switched.catch(() => undefined);
  if (done === undefined) return;
  done.undoValueFree();
  if (tf.getBackend() !== done.previous) await tf.setBackend(done.previous);
}

/**
 * Runs `fn` with tfjs on the shape-only backend, then switches back to the
 * backend used before, also when `fn` throws. While `fn` runs, every tensor
 * it makes has a shape and a dtype but no values (small tensors written from
 * the host, up to `SHAPE_ONLY_MAX_KEPT_ELEMENTS` elements, keep theirs), and
 * kernels only infer output shapes: a model larger than the host's memory
 * can be built, run forward and differentiated. What tfjs computes in
 * JavaScript without a kernel is not computed either: random draws (and so
 * dropout and random initializers), the initial values of layers' weights,
 * and the fills of gradients have shapes and no values.
 *
 * Tensors made inside stay on the shape-only backend after it returns:
 * shapes, dtypes and disposal work as usual, but reading their values
 * (`dataSync`, `data`, `array`, `print`), or using them in a kernel of
 * another backend, throws a `ShapeOnlyError` that names the kernel that made
 * the tensor. Tensors made before may be used inside: kernels read only their
 * shapes and dtypes.
 *
 * Calls may nest or overlap: the backend is switched on entering the first
 * and back on leaving the last. The backend is global in tfjs, so other tfjs
 * work that runs while `fn` awaits also runs on the shape-only backend.
 */
export async function withShapeOnlyBackend<T>(fn: () => T | Promise<T>): Promise<T> {
  const current = (session ??= { running: 0, switched: switchToShapeOnly() });
  current.running++;
  try {
    await current.switched;
    return await fn();
  } finally {
    current.running--;
    if (current.running === 0) {
      session = undefined;
      restoring = restore(current.switched);
      await restoring;
    }
  }
}
