/**
 * Composing a kernel out of other kernels of the same backend.
 *
 * A composite kernel runs the backend's own registered kernels directly (their
 * `kernelFunc`, not `tf.*` ops, so nothing reaches the engine, the tape or a
 * poptfjs trace) and must free every intermediate it makes. A
 * {@link KernelCallScope} does both: it runs kernels by name on one backend
 * and disposes their outputs when the composite kernel returns, except the
 * result.
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../../common/errors.js';

/** The kernel calls of one run of a composite kernel, and the intermediates they made. */
export class KernelCallScope {
  private readonly intermediates: tf.TensorInfo[] = [];

  private constructor(
    private readonly backendName: string,
    private readonly backend: tf.KernelBackend,
  ) {}

  /**
   * Runs `body` with a new scope on the backend `backend` registered as
   * `backendName`, then disposes every intermediate the scope made except
   * the result, also when `body` throws.
   */
  static run(backendName: string, backend: tf.KernelBackend, body: (scope: KernelCallScope) => tf.TensorInfo): tf.TensorInfo {
    const scope = new KernelCallScope(backendName, backend);
    let result: tf.TensorInfo | undefined;
    try {
      result = body(scope);
      return result;
    } finally {
      for (const info of scope.intermediates) {
        if (info !== result) backend.disposeData(info.dataId);
      }
    }
  }

  /**
   * Runs the backend's kernel `kernelName` and returns its (single) output,
   * an intermediate of this scope. `inputs` is a list for the kernels that
   * take one (`Concat`, `AddN`).
   */
  call(kernelName: string, inputs: tf.NamedTensorInfoMap | readonly tf.TensorInfo[], attrs: tf.NamedAttrMap = {}): tf.TensorInfo {
    const kernel = tf.getKernel(kernelName, this.backendName);
    if (kernel === undefined) {
      throw new PoptfjsError(`kernel '${kernelName}' is not registered for backend '${this.backendName}'`, { type: 'backend' });
    }
    return this.callKernel(kernel, inputs, attrs);
  }

  /**
   * Runs the kernel `kernel` (a registration of this scope's backend, such as
   * one an override replaced) and returns its (single) output, an
   * intermediate of this scope.
   */
  callKernel(kernel: tf.KernelConfig, inputs: tf.NamedTensorInfoMap | readonly tf.TensorInfo[], attrs: tf.NamedAttrMap = {}): tf.TensorInfo {
    const output = kernel.kernelFunc({ inputs: inputs as tf.NamedTensorInfoMap, attrs, backend: this.backend });
    if (Array.isArray(output)) {
      for (const info of output) this.backend.disposeData(info.dataId);
      throw new PoptfjsError(`kernel '${kernel.kernelName}' returned ${output.length} outputs where one was expected`, { type: 'backend' });
    }
    this.intermediates.push(output);
    return output;
  }

  /** `x` with a new shape of the same size (no copy). */
  reshape(x: tf.TensorInfo, shape: readonly number[]): tf.TensorInfo {
    return this.call(tf.Reshape, { x }, { shape: [...shape] });
  }

  /**
   * `x` with its axes permuted: axis `i` of the result is axis `perm[i]` of
   * `x`. Keep to rank 4 or less: the wasm `Transpose` has fast paths up to
   * rank 4 only, and a generic one about a hundred times slower.
   */
  transpose(x: tf.TensorInfo, perm: readonly number[]): tf.TensorInfo {
    return this.call(tf.Transpose, { x }, { perm: [...perm] });
  }

  /** A new float32 tensor holding `values`, an intermediate of this scope. */
  constant(values: Float32Array, shape: readonly number[]): tf.TensorInfo {
    const info: tf.TensorInfo = { dataId: this.backend.write(values, [...shape], 'float32'), shape: [...shape], dtype: 'float32' };
    this.intermediates.push(info);
    return info;
  }
}
