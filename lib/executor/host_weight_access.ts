/**
 * Host weights that follow the device's, as PopTorch's parameter hooks make
 * them: a training step only marks the host variables of its model stale
 * (nothing is copied), and the first access to one of them copies the device
 * weights to the host first. An access is any op reading the variable (tfjs
 * routes every op through `Engine.runKernel`: `model.predict`, `tf.clone`,
 * `tf.add(v, 1)`), a read of its values (`dataSync`, `data`, `bytes`,
 * `dataToGPU`, and so `array`, `arraySync`, `print`, `model.save`), or an
 * `assign` (the other weights are copied first, then the new value is
 * written).
 *
 * The hooks are installed on tfjs's prototypes once, when this module is
 * loaded, so that patches made later (the kernel recorder's, while a model is
 * traced) wrap them and restore them afterwards. With no stale weights they
 * only check a map's size.
 */
import * as tf from '@tensorflow/tfjs';
import { engine, type EngineInternals, type KernelInputs } from '../backend/tfjs_internals.js';

/** Something whose device may hold newer values of some host variables. */
export interface DeviceWeightHolder {
  /** Copies the device weights to the host variables if they are newer; true if it copied. */
  copyWeightsToHostIfNeeded(): boolean;
}

/** The holders whose device weights are newer than the host's, with the host variables of those weights by name. */
const stale = new Map<DeviceWeightHolder, ReadonlyMap<string, tf.Variable>>();

/** Records that the device of `holder` holds newer values of `variables` than the host (after a training step). */
export function markHostWeightsStale(holder: DeviceWeightHolder, variables: ReadonlyMap<string, tf.Variable>): void {
  stale.set(holder, variables);
}

/** Records that the host variables of `holder` are current (copied from its device, or to be left as they are). */
export function markHostWeightsCurrent(holder: DeviceWeightHolder): void {
  stale.delete(holder);
}

/** True while the device of `holder` holds newer weights than the host. */
export function hostWeightsStale(holder: DeviceWeightHolder): boolean {
  return stale.has(holder);
}

/** Copies the device weights of every holder whose stale variables include `tensor`. */
function refresh(tensor: unknown): void {
  if (stale.size === 0 || !(tensor instanceof tf.Variable)) return;
  for (const [holder, variables] of [...stale]) {
    if (variables.get(tensor.name) === tensor) holder.copyWeightsToHostIfNeeded();
  }
}

function refreshInputs(inputs: KernelInputs): void {
  if (stale.size === 0) return;
  for (const x of Array.isArray(inputs) ? inputs : Object.values(inputs)) refresh(x);
}

type TensorReader = (this: tf.Tensor, ...args: unknown[]) => unknown;

function installHooks(): void {
  const engineMethods = Object.getPrototypeOf(engine()) as EngineInternals;
  const runKernel = engineMethods.runKernel;
  engineMethods.runKernel = function (this: EngineInternals, kernelName, inputs, attrs) {
    refreshInputs(inputs);
    return runKernel.call(this, kernelName, inputs, attrs);
  };
  const tensorMethods = tf.Tensor.prototype as unknown as Record<string, TensorReader>;
  for (const name of ['dataSync', 'data', 'bytes', 'dataToGPU']) {
    const read = tensorMethods[name]!;
    tensorMethods[name] = function (this: tf.Tensor, ...args: unknown[]) {
      refresh(this);
      return read.apply(this, args);
    };
  }
  const assign = tf.Variable.prototype.assign;
  tf.Variable.prototype.assign = function (this: tf.Variable, value: tf.Tensor) {
    refresh(this);
    assign.call(this, value);
  };
}

installHooks();
