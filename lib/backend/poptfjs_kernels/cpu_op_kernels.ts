/**
 * The kernel of `ops.CPU`: `poptfjs.CpuOp` copies its inputs to the host,
 * calls the host function registered under its `id` attribute on them, and
 * copies the results back, as PopTorch's CPU op streams its tensors to host
 * buffers, runs the Python function and streams its outputs back.
 *
 * A CPU op has no gradient: as in PopTorch, CPU ops run in inference models.
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../../common/errors.js';
import type { HostKernel } from './backend_kernel.js';

/** The kernel name of `ops.CPU`. */
export const CPU_OP = 'poptfjs.CpuOp';

/** A function `ops.CPU` runs on the host: tensors in, a tensor or a list of tensors out. */
export type HostFunction = (...inputs: tf.Tensor[]) => tf.Tensor | tf.Tensor[];

const hostFunctions = new Map<string, HostFunction>();

/** Registers `fn` as the host function of CPU op `id` in this process (replacing the one registered under `id` before). */
export function registerHostFunction(id: string, fn: HostFunction): void {
  hostFunctions.set(id, fn);
}

function hostFunction(id: string): HostFunction {
  const fn = hostFunctions.get(id);
  if (fn) return fn;
  throw new PoptfjsError(`CPU op '${id}' has no host function in this process: create it with new ops.CPU(fn, '${id}') before running the model`, {
    type: 'runtime',
    location: `CPU op '${id}'`,
  });
}

/** A copy of `t` made from its values (what crosses the host link). */
function copied(values: tf.backend_util.BackendValues, shape: number[], dtype: tf.DataType): tf.Tensor {
  return tf.tensor(values as tf.TypedArray, shape, dtype);
}

function cpuOpKernel(): tf.KernelFunc {
  return ({ inputs, attrs, backend }) => {
    const id = String(attrs?.id);
    const fn = hostFunction(id);
    const device = backend as tf.KernelBackend;
    const list = (Array.isArray(inputs) ? inputs : Object.values(inputs)) as tf.TensorInfo[];
    return tf.tidy(() => {
      const onHost = list.map((t) => copied(device.readSync(t.dataId), t.shape, t.dtype));
      const result: unknown = fn(...onHost);
      const outputs: unknown[] = Array.isArray(result) ? result : [result];
      const back = outputs.map((o, i) => {
        if (!(o instanceof tf.Tensor))
          throw new PoptfjsError(`CPU op '${id}': output ${i} of its function is not a tf.Tensor (got ${o === null ? 'null' : typeof o})`, {
            type: 'runtime',
            location: `CPU op '${id}'`,
          });
        return copied(o.dataSync(), o.shape, o.dtype);
      });
      return Array.isArray(result) ? back : back[0]!;
    });
  };
}

const cpuOpGradient: tf.GradConfig = {
  kernelName: CPU_OP,
  gradFunc: (_dy, _saved, attrs) => {
    throw new PoptfjsError(
      `CPU op '${String(attrs.id)}' has no gradient: CPU ops run in inference models only, as in PopTorch; keep it off the path from the weights to the loss`,
      { type: 'trace', location: `CPU op '${String(attrs.id)}'` },
    );
  },
};

/** `ops.CPU`: copies its list of inputs to the host, runs the host function registered under attribute `id`, and copies its results back (its gradient is an error). */
export const CPU_OP_KERNEL: HostKernel = { kernelName: CPU_OP, kernelFunc: cpuOpKernel, gradient: cpuOpGradient };
