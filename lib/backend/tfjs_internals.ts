/**
 * The parts of tfjs-core's engine that poptfjs hooks into or calls directly.
 *
 * tfjs routes every op through `Engine.runKernel`, saves tensors for the
 * backward pass with `Engine.clone`, records the tape with
 * `Engine.addTapeNode`, and creates tensors without a kernel with
 * `Engine.makeTensor`. These members are not in tfjs's public typings; this
 * file is the one place that names them.
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
  gradients(f: () => tf.Tensor, xs: tf.Tensor[], dy?: tf.Tensor, allowNoGradients?: boolean): { value: tf.Tensor; grads: Array<tf.Tensor | undefined> };
}

/** The global tfjs engine, with its internal members typed. */
export function engine(): EngineInternals {
  return tf.engine() as unknown as EngineInternals;
}

/** The kernel function of `kernelName` on the active backend, or undefined if the backend lacks it. */
export function kernelFunction(kernelName: string): tf.KernelFunc | undefined {
  return tf.getKernel(kernelName, tf.getBackend())?.kernelFunc;
}
