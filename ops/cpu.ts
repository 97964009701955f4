/**
 * `CPU`: PopTorch's `poptorch.CPU`, a function run on the host in the middle
 * of a model that runs on the IPU.
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../lib/common/errors.js';
import { CallableInstance } from '../lib/executor/callable_instance.js';
import { POPTFJS_KERNELS } from '../lib/backend/poptfjs_kernels/kernel_names.js';
import { registerHostFunction, type CpuOpAttrs, type HostFunction } from '../lib/backend/poptfjs_kernels/cpu_op_kernels.js';
import { isRunningOnIpu } from '../lib/trace/running_on_ipu.js';

export type { HostFunction } from '../lib/backend/poptfjs_kernels/cpu_op_kernels.js';

function invalid(message: string): PoptfjsError {
  return new PoptfjsError(`CPU: ${message}`, { type: 'trace', location: 'CPU' });
}

/**
 * A CPU op: `new ops.CPU(fn, id)` makes an object that is called like `fn`
 * (`cpu(x, y)`) inside a model. On the simulated IPU each call is one node,
 * `poptfjs.CpuOp` (attribute `id`): every time the device runs it (once per
 * micro-batch) its inputs are copied to the host, `fn` runs on them with
 * their real values, and its results are copied back to the device, as
 * PopTorch's CPU op does. Outside a poptfjs model it simply calls `fn`.
 * While the model is traced, `fn` runs once on the example inputs (its
 * results declare the outputs' shapes and dtypes, float32 or int32); it must
 * return tensors of those shapes and dtypes each time, else the run fails
 * naming the op and the output. Two CPU ops made with the same `id` each keep
 * their function: a model runs the one it was traced with. A saved or
 * exported executable run in another process finds its function by `id`
 * (the CPU op of that id made last there), and names the id when there is
 * none.
 *
 * As in PopTorch, CPU ops belong in inference models: they have no
 * gradient, and training through one is an error naming it.
 *
 * On the simulated IPU's timeline the node sends its inputs to the host and
 * receives its outputs at the host link's bandwidth (`hostLinkBandwidth`,
 * 5.5 GB/s on a GC200), with a sync with the host in between; the time the
 * host takes to run `fn` is the host's and is not modelled. Its outputs take
 * device memory as any activation.
 */
export class CPU extends CallableInstance {
  /** The CPU op's name (PopTorch's `ID`), the key its function is found by. */
  readonly id: string;
  private readonly fn: HostFunction;
  /** Which of the CPU ops named `id` in this process this is: a model runs the function of its own op. */
  private readonly index: number;

  /** Runs `fn` on the host whenever the device reaches the op; `id` names it. */
  constructor(fn: HostFunction, id: string) {
    super();
    if (typeof fn !== 'function') throw invalid(`expected a function to run on the host, got ${fn === null ? 'null' : typeof fn}`);
    if (typeof id !== 'string' || id === '') throw invalid(`the id must be a non-empty string, got ${JSON.stringify(id)}`);
    this.fn = fn;
    this.id = id;
    this.index = registerHostFunction(id, fn);
  }

  /** Calls the op on `inputs`: `fn(...inputs)` outside a model, a `poptfjs.CpuOp` node inside one. */
  run(...inputs: tf.Tensor[]): tf.Tensor | tf.Tensor[] {
    const bad = inputs.findIndex((t) => !(t instanceof tf.Tensor));
    if (bad >= 0) throw invalid(`argument ${bad} of CPU op '${this.id}' is not a tf.Tensor`);
    if (!isRunningOnIpu()) return this.fn(...inputs);
    const attrs: CpuOpAttrs = { id: this.id, index: this.index };
    return tf.engine().runKernel(POPTFJS_KERNELS.cpuOp, inputs as unknown as tf.NamedTensorMap, attrs as unknown as tf.NamedAttrMap) as unknown as tf.Tensor | tf.Tensor[];
  }
}

/** Calling a CPU op calls {@link CPU.run}. */
export interface CPU {
  (...inputs: tf.Tensor[]): tf.Tensor | tf.Tensor[];
}
