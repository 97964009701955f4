/**
 * Running a kernel the active backend lacks on the cpu backend.
 *
 * tfjs's cpu backend implements every kernel; wasm lacks a few (the complex
 * and FFT kernels, `Einsum`, the ragged kernels, ...). A fallback kernel
 * copies its inputs from the active backend into the cpu backend, runs the
 * cpu kernel there, and copies the outputs back: correct, and slow only by
 * the copies and the cpu kernel itself. Each kernel that falls back is
 * logged once at WARN (module `devicex`) and counted, for reports.
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../common/errors.js';
import { getLogger } from '../common/log.js';

const CPU = 'cpu';
const log = getLogger('devicex');
const counts = new Map<string, number>();

function cpuBackend(): tf.KernelBackend {
  const backend = tf.engine().findBackend(CPU) as tf.KernelBackend | null;
  if (!backend) throw new PoptfjsError(`the '${CPU}' backend needed to run kernels this backend lacks is not registered`, { type: 'backend' });
  return backend;
}

function copy(info: tf.TensorInfo, from: tf.KernelBackend, to: tf.KernelBackend): tf.TensorInfo {
  const dataId = to.write(from.readSync(info.dataId), info.shape, info.dtype);
  return { dataId, shape: info.shape, dtype: info.dtype };
}

/**
 * `inputs` with each tensor replaced by `convert(tensor)`. Most kernels take
 * named inputs; a few (`Einsum`, `AddN`, `Concat`, ...) take a list, which
 * the engine passes through as an array.
 */
function copyInputs(inputs: tf.NamedTensorInfoMap, convert: (info: tf.TensorInfo) => tf.TensorInfo): tf.NamedTensorInfoMap {
  if (Array.isArray(inputs)) return (inputs as tf.TensorInfo[]).map(convert) as unknown as tf.NamedTensorInfoMap;
  const converted: tf.NamedTensorInfoMap = {};
  for (const [name, info] of Object.entries(inputs)) {
    if (info !== undefined) converted[name] = convert(info);
  }
  return converted;
}

/**
 * A kernel function that runs `kernelName` on the cpu backend for the
 * backend it is called with, or undefined when the active backend has the
 * kernel itself or the cpu backend does not have it either.
 */
export function fallbackKernel(kernelName: string): tf.KernelFunc | undefined {
  if (tf.getKernel(kernelName, tf.getBackend()) !== undefined) return undefined;
  const cpuKernel = tf.getKernel(kernelName, CPU);
  if (cpuKernel === undefined) return undefined;
  return ({ inputs, attrs, backend }) => {
    const active = backend as tf.KernelBackend;
    const cpu = cpuBackend();
    if (active === cpu) return cpuKernel.kernelFunc({ inputs, attrs, backend: cpu });
    log.warnOnce(
      `cpu-fallback:${kernelName}`,
      () => `kernel '${kernelName}' is not implemented by the '${tf.getBackend()}' backend; running it on the '${CPU}' backend, with its inputs and outputs copied`,
    );
    counts.set(kernelName, (counts.get(kernelName) ?? 0) + 1);
    const copies: tf.TensorInfo[] = [];
    try {
      const cpuInputs = copyInputs(inputs, (info) => {
        const cpuInfo = copy(info, active, cpu);
        copies.push(cpuInfo);
        return cpuInfo;
      });
      const outputs = cpuKernel.kernelFunc({ inputs: cpuInputs, attrs, backend: cpu });
      const list = Array.isArray(outputs) ? outputs : [outputs];
      copies.push(...list);
      const copied = list.map((info) => copy(info, cpu, active));
      return Array.isArray(outputs) ? copied : copied[0]!;
    } finally {
      for (const info of copies) cpu.disposeData(info.dataId);
    }
  };
}

/** How many times each kernel has run through {@link fallbackKernel} in this process, by kernel name. */
export function fallbackCounts(): ReadonlyMap<string, number> {
  return new Map(counts);
}

/**
 * Registers a cpu fallback for every kernel the active backend lacks and the
 * cpu backend has, so models using them trace and run (slowly, and
 * reported) instead of failing. Returns the kernels registered.
 */
export function registerCpuFallbacks(): string[] {
  const backend = tf.getBackend();
  if (backend === CPU) return [];
  const registered: string[] = [];
  for (const { kernelName } of tf.getKernelsForBackend(CPU)) {
    const kernelFunc = fallbackKernel(kernelName);
    if (!kernelFunc) continue;
    tf.registerKernel({ kernelName, backendName: backend, kernelFunc });
    registered.push(kernelName);
  }
  return registered;
}
