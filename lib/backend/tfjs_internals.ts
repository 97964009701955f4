/**
 * The parts of tfjs-core's engine that poptfjs hooks into or calls directly.
 *
 * tfjs routes every op through `Engine.runKernel`, saves tensors for the
 * backward pass with `Engine.clone`, records the tape with
 * `Engine.addTapeNode`, creates tensors without a kernel with
 * `Engine.makeTensor`, and runs each op in a scope of its name
 * (`Engine.startScope` / `endScope`). These members are not in tfjs's public
 * typings; this file is the one place that names them.
 */
import * as tf from '@tensorflow/tfjs';

/** A kernel's inputs: a map of named tensors, or a positional list. */
export type KernelInputs = Record<string, tf.Tensor | undefined | null> | tf.Tensor[];

/** One scope of the engine (`tidy`, or an op's scope named `<op>__op`). */
export interface EngineScope {
  name: string;
  id: number;
}

/** A node of the engine's gradient tape. */
export interface TapeNode {
  id: number;
  kernelName: string;
  outputs: tf.Tensor[];
  inputs: Record<string, tf.Tensor>;
  gradient?: (dys: tf.Tensor[]) => Record<string, () => tf.Tensor>;
}

/** The engine's mutable state. */
export interface EngineState {
  activeScope: EngineScope | null;
  activeTape: TapeNode[] | null;
  registeredVariables: Record<string, tf.Variable>;
  tensorInfo: { get(dataId: object): { backend: tf.KernelBackend } | undefined };
}

/** The engine surface poptfjs uses. */
export interface EngineInternals {
  state: EngineState;
  backend: tf.KernelBackend;
  backendName: string;
  /** The backends initialised so far, by name. */
  registry: Record<string, tf.KernelBackend>;
  runKernel(kernelName: string, inputs: KernelInputs, attrs?: Record<string, unknown>): tf.Tensor | tf.Tensor[];
  clone(x: tf.Tensor): tf.Tensor;
  addTapeNode(kernelName: string, inputs: Record<string, tf.Tensor>, outputs: tf.Tensor[], gradientsFunc: unknown, saved: tf.Tensor[], attrs: Record<string, unknown>): void;
  makeTensor(values: unknown, shape: number[], dtype: tf.DataType, backend?: tf.KernelBackend): tf.Tensor;
  makeTensorFromTensorInfo(info: tf.TensorInfo, backend?: tf.KernelBackend): tf.Tensor;
  /** Enters a scope: `tidy`'s (name undefined), or an op's, named `<op>__op`. */
  startScope(name?: string): void;
  /** Leaves the innermost scope, keeping `result`'s tensors. */
  endScope(result?: unknown): void;
  gradients(f: () => tf.Tensor, xs: tf.Tensor[], dy?: tf.Tensor, allowNoGradients?: boolean): { value: tf.Tensor; grads: Array<tf.Tensor | undefined> };
}

/** The global tfjs engine, with its internal members typed. */
export function engine(): EngineInternals {
  return tf.engine() as unknown as EngineInternals;
}

/** The engine's members poptfjs replaces while it records or plans. */
export type HookedEngineMethod = 'runKernel' | 'clone' | 'addTapeNode' | 'makeTensor' | 'startScope' | 'endScope';

/**
 * Replaces the engine's `name` with `make(previous)` and returns the
 * function that puts `previous` back: as the engine's own member if it was
 * one (another hook, installed before), else by deleting the replacement so
 * the prototype's method shows again. Hooks must be undone in the reverse
 * order of their installation.
 */
export function hookEngine<K extends HookedEngineMethod>(name: K, make: (previous: EngineInternals[K]) => EngineInternals[K]): () => void {
  const eng = engine();
  const own = Object.hasOwn(eng, name);
  const previous = eng[name];
  eng[name] = make(previous);
  return () => {
    if (own) eng[name] = previous;
    else delete (eng as Partial<EngineInternals>)[name];
  };
}

/** The kernel function of `kernelName` on the active backend, or undefined if the backend lacks it. */
export function kernelFunction(kernelName: string): tf.KernelFunc | undefined {
  return tf.getKernel(kernelName, tf.getBackend())?.kernelFunc;
}

/**
 * Spends the greeting tfjs's cpu backend prints on stderr at its first tensor
 * in Node (advice to install tfjs-node): poptfjs chose its backend already and
 * uses the cpu backend only for small computations beside it.
 */
export function quietCpuBackend(backend: tf.KernelBackend): void {
  if ('firstUse' in backend) (backend as unknown as { firstUse: boolean }).firstUse = false;
}
