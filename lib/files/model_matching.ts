/**
 * Checking that a freshly wrapped model is the model a precompiled
 * executable (or a checkpoint) was made from: the same kind, the same
 * traced inputs and outputs, and the same parameters in the same order
 * with the same shapes. Parameters are matched by position, as tfjs numbers
 * the variable names of each model instance; the first difference found is
 * the error.
 */
import { PoptfjsError } from '../common/errors.js';
import type { Graph } from '../ir/graph.js';
import type { Executable, TensorSignature } from '../executable/executable.js';
import { describeParameter, type ParameterSpec } from './parameter_spec.js';
import type { ReplicaGrouping } from '../executable/replica_grouping.js';

/** What is compared between a file and a model. */
export interface ModelDescription {
  readonly kind: Executable['kind'];
  /** One micro-batch of each input. */
  readonly inputs: readonly TensorSignature[];
  /** Each output; absent when not known (a checkpoint). */
  readonly outputs?: readonly TensorSignature[];
  /** In trace order. */
  readonly parameters: readonly ParameterSpec[];
  /** Weights split across replica groups, by parameter name. */
  readonly replicaGroupings: Readonly<Record<string, ReplicaGrouping>>;
}

/** The outputs of a graph, as signatures. */
export function outputSignature(graph: Graph): TensorSignature[] {
  return graph.roles.outputs.map((id) => ({ shape: graph.values[id]!.shape, dtype: graph.values[id]!.dtype }));
}

function text(s: TensorSignature): string {
  return `${s.dtype}[${s.shape.join(',')}]`;
}

function groupingText(g: ReplicaGrouping | undefined): string {
  return g ? `split across replica groups (${g.type}, ${g.groupSize}, ${g.retrieval})` : 'not split across replica groups';
}

function signatureDifference(what: string, file: readonly TensorSignature[], model: readonly TensorSignature[]): string | undefined {
  if (file.length !== model.length) return `the file has ${file.length} ${what}(s), the model ${model.length}`;
  const i = file.findIndex((s, k) => text(s) !== text(model[k]!));
  return i < 0 ? undefined : `${what} ${i} is ${text(file[i]!)} in the file but ${text(model[i]!)} in the model`;
}

function kindDifference(file: Executable['kind'], model: Executable['kind']): string | undefined {
  return file === model ? undefined : `the file holds a ${file} executable, but the model is wrapped for ${model} (use ${file}Model)`;
}

function firstDifference(file: ModelDescription, model: ModelDescription): string | undefined {
  const kind = kindDifference(file.kind, model.kind);
  if (kind) return kind;
  const inputs = signatureDifference('input', file.inputs, model.inputs);
  if (inputs) return inputs;
  if (file.outputs && model.outputs) {
    const outputs = signatureDifference('output', file.outputs, model.outputs);
    if (outputs) return outputs;
  }
  if (file.parameters.length !== model.parameters.length) {
    return `the file has ${file.parameters.length} parameter(s), the model ${model.parameters.length}`;
  }
  for (let i = 0; i < file.parameters.length; i++) {
    const f = file.parameters[i]!;
    const m = model.parameters[i]!;
    if (describeParameter(f) !== describeParameter(m)) {
      return `parameter ${i} is ${describeParameter(f)} in the file ('${f.name}') but ${describeParameter(m)} in the model ('${m.name}')`;
    }
    const fg = Object.hasOwn(file.replicaGroupings, f.name) ? file.replicaGroupings[f.name] : undefined;
    const mg = Object.hasOwn(model.replicaGroupings, m.name) ? model.replicaGroupings[m.name] : undefined;
    if (groupingText(fg) !== groupingText(mg)) {
      return `parameter ${i} ('${m.name}') is ${groupingText(fg)} in the file but ${groupingText(mg)} in the model; set it with executor.parameter(name).replicaGrouping(...)`;
    }
  }
  return undefined;
}

function mismatch(file: string, difference: string): PoptfjsError {
  return new PoptfjsError(`${file} does not match the wrapped model: ${difference}`, { type: 'executor', location: file });
}

/** Checks that a model wrapped for `model` can take an executable of kind `fileKind` (before tracing it). */
export function matchKind(file: string, fileKind: Executable['kind'], model: Executable['kind']): void {
  const difference = kindDifference(fileKind, model);
  if (difference) throw mismatch(file, difference);
}

/**
 * Checks `model` against what `file` describes; returns each file parameter
 * name's counterpart in the model. An error naming the file and the first
 * difference otherwise.
 */
export function matchModel(file: string, what: ModelDescription, model: ModelDescription): Map<string, string> {
  const difference = firstDifference(what, model);
  if (difference) throw mismatch(file, difference);
  return new Map(what.parameters.map((p, i) => [p.name, model.parameters[i]!.name]));
}
