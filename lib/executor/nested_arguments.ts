/**
 * The arguments and results of an executor's calls when they nest: a
 * function model takes and returns arrays and plain objects of tensors (and
 * plain values), as PopTorch takes tuples, lists and dicts. The device runs
 * on the tensors alone, flattened; the structure the model was compiled with
 * checks each call and gives the outputs their nesting back. A layers model
 * takes and returns tensors only.
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../common/errors.js';
import type { Executable, IoStructure } from '../executable/executable.js';
import { FlatModel } from '../trace/flat_model.js';
import type { LossSpec } from '../trace/loss_function.js';
import { isLayersModel, type TensorFunction, type WrappableModel } from '../trace/model_function.js';
import { describeStructure, flattenAlong, keyPath, showStructure, structureOf, unflatten, type NestedTensors, type Structure } from '../trace/nested_values.js';

/**
 * Splits `args` into the inputs and a trailing options object: the last
 * argument is the options when it is a plain object with at least one key,
 * every key one of `optionKeys`, and no tensor in it; any other object is an
 * input (a dict of tensors).
 */
export function splitTrailingOptions<T extends object>(args: readonly unknown[], optionKeys: ReadonlyArray<keyof T & string>): { inputs: unknown[]; options: T | undefined } {
  const last = args[args.length - 1];
  const isOptions =
    typeof last === 'object' &&
    last !== null &&
    Object.getPrototypeOf(last) === Object.prototype &&
    Object.keys(last).length > 0 &&
    Object.keys(last).every((k) => (optionKeys as readonly string[]).includes(k)) &&
    !Object.values(last).some((v) => v instanceof tf.Tensor);
  return isOptions ? { inputs: args.slice(0, -1), options: last as T } : { inputs: [...args], options: undefined };
}

/** Checks that every argument is a live tensor (a layers model's inputs, or a model compiled without a structure). */
export function checkTensorInputs(inputs: readonly unknown[]): asserts inputs is tf.Tensor[] {
  inputs.forEach((x, i) => {
    if (!(x instanceof tf.Tensor)) {
      const got = x === null ? 'null' : Array.isArray(x) ? 'an array' : ArrayBuffer.isView(x) ? 'a typed array' : typeof x;
      throw new PoptfjsError(`input ${i} is ${got}; expected a tf.Tensor`, { type: 'input' });
    }
    if (x.isDisposed) throw new PoptfjsError(`input ${i} is a disposed tensor`, { type: 'input' });
  });
}

/** The structure of each argument of the call a model is compiled for; a layers model takes tensors only. */
export function argumentStructures(args: readonly unknown[], model: WrappableModel): Structure[] {
  if (isLayersModel(model)) {
    checkTensorInputs(args);
    return args.map(() => ({ kind: 'tensor' }));
  }
  return args.map((arg, i) => structureOf(arg, `input ${i}`, true));
}

/** The tensors of `args` in flattened order, taken as the structures say (the first call's own structures when compiling). */
export function flattenArguments(args: readonly unknown[], structures: readonly Structure[]): tf.Tensor[] {
  return structures.flatMap((s, i) => flattenAlong(args[i], s, `input ${i}`));
}

/**
 * `args` as long as the compiled inputs `compiled` where they differ only by
 * arguments left out: an argument left out is undefined, as a JavaScript
 * function sees it (and then takes its default value), so a call may leave
 * out trailing arguments the model was compiled with as undefined, or pass
 * undefined for ones it was compiled without, as PopTorch passes a
 * parameter's default when a call leaves it out.
 */
function withOmittedArguments(args: readonly unknown[], compiled: readonly Structure[]): readonly unknown[] {
  const isUndefined = (s: Structure | undefined) => s?.kind === 'value' && s.value === undefined;
  if (args.length < compiled.length && compiled.slice(args.length).every(isUndefined)) return [...args, ...compiled.slice(args.length).map(() => undefined)];
  if (args.length > compiled.length && args.slice(compiled.length).every((a) => a === undefined)) return args.slice(0, compiled.length);
  return args;
}

/**
 * The tensors a call passes to the compiled model, flattened along the
 * structure it was compiled with; a call whose structure differs is an error
 * naming where (trailing arguments left out count as undefined). A call of
 * tensors only to a model compiled for tensors only is passed on as it is
 * (the signature check names a wrong count).
 */
export function compiledArguments(given: readonly unknown[], executable: Executable): tf.Tensor[] {
  const io = executable.ioStructure;
  if (!io) {
    checkTensorInputs(given);
    return given;
  }
  const args = withOmittedArguments(given, io.inputs);
  if (args.length !== io.inputs.length) {
    const flat = io.inputs.every((s) => s.kind === 'tensor') && args.every((a) => a instanceof tf.Tensor);
    if (flat) return args as tf.Tensor[];
    throw new PoptfjsError(
      `expected ${io.inputs.length} input(s) as at compile (${io.inputs.map((s, i) => `input ${i}: ${describeStructure(s)}`).join(', ')}), got ${args.length}`,
      { type: 'input' },
    );
  }
  return flattenArguments(args, io.inputs);
}

/** The name of each tensor of arguments of `structures`, in flattened order: `input 1.b[1]`. */
export function tensorNames(structures: readonly Structure[]): string[] {
  const names: string[] = [];
  const visit = (s: Structure, at: string): void => {
    if (s.kind === 'tensor') names.push(at);
    else if (s.kind === 'array') s.items.forEach((item, i) => visit(item, `${at}[${i}]`));
    else if (s.kind === 'object') s.entries.forEach(([k, item]) => visit(item, keyPath(at, k)));
    else if (s.kind === 'custom') for (let i = 0; i < s.count; i++) names.push(`${at}.tensors[${i}]`);
  };
  structures.forEach((s, i) => visit(s, `input ${i}`));
  return names;
}

/** The name of each tensor the compiled model takes, in flattened order. */
export function inputNames(executable: Executable): string[] {
  const structures = executable.ioStructure?.inputs;
  return structures ? tensorNames(structures) : executable.inputSignature.map((_, i) => `input ${i}`);
}

/**
 * The model's output as a call returns it: in the structure the model
 * returned (arrays stay arrays, objects keep their keys); as for a layers
 * model, an array of one is returned as its element.
 */
export function callOutput(executable: Executable, outputs: tf.Tensor[]): NestedTensors {
  const io = executable.ioStructure;
  if (!io) return executable.singleOutput ? outputs[0]! : outputs;
  const built = unflatten(io.outputs, outputs);
  return io.outputs.kind === 'array' && io.outputs.items.length === 1 ? (built as NestedTensors[])[0] : built;
}

/**
 * A function model to trace with flat tensors, called with arguments of
 * `structures` (a training model with a `loss` takes its own arguments, then
 * targets: the model's parameters say how many are its own, else all but the
 * last).
 */
export function flatModel(model: TensorFunction, structures: readonly Structure[], training: boolean, loss: LossSpec | undefined): FlatModel {
  const own = training && loss !== undefined ? (model.length > 0 ? model.length : structures.length - 1) : structures.length;
  return new FlatModel(model, structures.slice(0, own));
}

/** The input and output structures of a model traced through `model`. */
export function ioStructure(inputs: readonly Structure[], model: FlatModel): IoStructure {
  return { inputs, outputs: model.outputs() };
}

/** Checks that the wrapped model returns its outputs nested as the model of the executable file `path` did. */
export function matchOutputStructure(path: string, file: Structure, traced: Structure): void {
  if (showStructure(file) !== showStructure(traced)) {
    throw new PoptfjsError(`${path} does not match the wrapped model: the file's model returns ${showStructure(file)}, the wrapped model ${showStructure(traced)}`, {
      type: 'executor',
      location: path,
    });
  }
}
