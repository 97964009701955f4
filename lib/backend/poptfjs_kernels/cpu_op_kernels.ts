/**
 * The kernel of `ops.CPU`: `poptfjs.CpuOp` copies its inputs to the host,
 * calls the host function of its CPU op on them, and copies the results
 * back, as PopTorch's CPU op streams its tensors to host buffers, runs the
 * Python function and streams its outputs back.
 *
 * A node finds its function by its attributes `id` (the op's name) and
 * `index` (which of the CPU ops made with that name in this process, in the
 * order they were made), so that two models using two ops of one name each
 * run their own, as PopTorch keeps each model's callbacks; a node from an
 * executable made in another process, whose op was not made here, runs the
 * function of the last op made with its name.
 *
 * The first time a node runs (while its model is traced) its function's
 * results declare its outputs (attributes `outputShapes` and `outputDtypes`),
 * and every later run's results must be tensors of those shapes and dtypes,
 * as `customOp` checks its kernels': a wrong shape, another dtype (an int32
 * result would be read as float32), a missing or an extra output is an
 * error naming the op, never passed on.
 *
 * A CPU op has no gradient: as in PopTorch, CPU ops run in inference models.
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../../common/errors.js';
import { registerForBackends } from './backend_kernel.js';
import { POPTFJS_KERNELS } from './kernel_names.js';

/** A function `ops.CPU` runs on the host: tensors in, a tensor or a list of tensors out. */
export type HostFunction = (...inputs: tf.Tensor[]) => tf.Tensor | tf.Tensor[];

/** The attributes of a CPU op node. */
export interface CpuOpAttrs {
  /** The op's name (PopTorch's `ID`). */
  readonly id: string;
  /** Which of the ops made with that name in this process, counting from 0. */
  readonly index: number;
  /** The shapes of the outputs, declared by the first run (the trace). */
  outputShapes?: number[][];
  /** Their dtypes. */
  outputDtypes?: tf.DataType[];
}

/** The dtypes a host function's results may have (what the host streams carry). */
const HOST_DTYPES: readonly tf.DataType[] = ['float32', 'int32'];

/** The host functions of the CPU ops made in this process, by name, in the order they were made. */
const hostFunctions = new Map<string, HostFunction[]>();

/**
 * Registers `fn` as the host function of a CPU op named `id` and returns
 * its index among the ops of that name (the same index for the same
 * function made into an op twice).
 */
export function registerHostFunction(id: string, fn: HostFunction): number {
  const functions = hostFunctions.get(id) ?? [];
  hostFunctions.set(id, functions);
  const known = functions.indexOf(fn);
  if (known >= 0) return known;
  functions.push(fn);
  return functions.length - 1;
}

function hostFunction(id: string, index: number): HostFunction {
  const functions = hostFunctions.get(id);
  const fn = functions?.[index] ?? functions?.[functions.length - 1];
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

function describe(shape: readonly number[], dtype: string): string {
  return `${dtype}[${shape.join(',')}]`;
}

/**
 * The results of a CPU op's function as a list of tensors, checked: against
 * the declared outputs when there are (else they declare them, in `attrs`).
 */
function checkedResults(result: unknown, attrs: CpuOpAttrs): tf.Tensor[] {
  const where = `CPU op '${attrs.id}'`;
  const fail = (problem: string) => new PoptfjsError(`${where}: ${problem}`, { type: 'runtime', location: where });
  const outputs: unknown[] = Array.isArray(result) ? result : [result];
  if (outputs.length === 0) throw fail('its function returned no tensor; it must return a tf.Tensor or a list of them');
  outputs.forEach((o, i) => {
    if (!(o instanceof tf.Tensor)) throw fail(`output ${i} of its function is not a tf.Tensor (got ${o === null ? 'null' : typeof o})`);
    if (o.isDisposed) throw fail(`output ${i} of its function is a disposed tensor; return tensors the function keeps alive`);
    if (!HOST_DTYPES.includes(o.dtype)) throw fail(`output ${i} of its function is ${describe(o.shape, o.dtype)}; CPU ops return ${HOST_DTYPES.join(' or ')} tensors`);
  });
  const tensors = outputs as tf.Tensor[];
  const { outputShapes, outputDtypes } = attrs;
  if (outputShapes === undefined || outputDtypes === undefined) {
    attrs.outputShapes = tensors.map((t) => [...t.shape]);
    attrs.outputDtypes = tensors.map((t) => t.dtype);
    return tensors;
  }
  const declared = (i: number) => describe(outputShapes[i]!, outputDtypes[i]!);
  if (tensors.length !== outputShapes.length) {
    throw fail(
      `its function returned ${tensors.length} tensor(s) where ${outputShapes.length} (${outputShapes.map((_, i) => declared(i)).join(', ')}) are declared by what it returned when the model was traced`,
    );
  }
  tensors.forEach((t, i) => {
    if (describe(t.shape, t.dtype) !== declared(i)) {
      throw fail(`output ${i} of its function is ${describe(t.shape, t.dtype)}, but ${declared(i)} is declared by what it returned when the model was traced`);
    }
  });
  return tensors;
}

function cpuOpKernel(): tf.KernelFunc {
  return ({ inputs, attrs, backend }) => {
    const a = attrs as unknown as CpuOpAttrs;
    const fn = hostFunction(a.id, a.index ?? 0);
    const device = backend as tf.KernelBackend;
    const list = (Array.isArray(inputs) ? inputs : Object.values(inputs)) as tf.TensorInfo[];
    return tf.tidy(() => {
      const onHost = list.map((t) => copied(device.readSync(t.dataId), t.shape, t.dtype));
      const result: unknown = fn(...onHost);
      const back = checkedResults(result, a).map((o) => copied(o.dataSync(), o.shape, o.dtype));
      return Array.isArray(result) ? back : back[0]!;
    });
  };
}

const cpuOpGradient: tf.GradConfig = {
  kernelName: POPTFJS_KERNELS.cpuOp,
  gradFunc: (_dy, _saved, attrs) => {
    throw new PoptfjsError(
      `CPU op '${String(attrs.id)}' has no gradient: CPU ops run in inference models only, as in PopTorch; keep it off the path from the weights to the loss`,
      { type: 'trace', location: `CPU op '${String(attrs.id)}'` },
    );
  },
};

/** Registers the CPU op kernel for `backendNames`, and its gradient (an error). */
export function registerCpuOpKernels(backendNames: readonly string[]): void {
  registerForBackends(POPTFJS_KERNELS.cpuOp, backendNames, cpuOpKernel);
  if (!tf.getGradient(POPTFJS_KERNELS.cpuOp)) tf.registerGradient(cpuOpGradient);
}
