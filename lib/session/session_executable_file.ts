/**
 * A session's executable in a file (`compileAndExport`, `loadExecutable`,
 * engine caching): the executable file the model wrappers write, holding
 * the compiled executable, the weights it expects and the options it was
 * compiled with. Loading one into a session checks that it was compiled
 * from the same model (kind, inputs, anchors, weights) with the same
 * compile-affecting options, and renames its weights to the session's.
 */
import * as tf from '@tensorflow/tfjs';
import { PopartException } from '../common/errors.js';
import { compileAffectingOptions } from '../compile/executable_cache_key.js';
import { matchModel, outputSignature, type ModelDescription } from '../files/model_matching.js';
import { paramValues, type Graph } from '../ir/graph.js';
import type { Options } from '../options/options.js';
import type { Executable, TensorSignature } from '../executable/executable.js';
import type { ExecutableFileContents } from '../files/executable_file.js';
import { stringifyLossless } from '../proto/lossless_json.js';
import { optimizerConfig } from '../files/optimizer_config.js';
import { renameExecutableParameters } from '../executable/parameter_renaming.js';
import type { ParameterSpec } from '../files/parameter_spec.js';
import type { Optimizer } from '../../optim/optimizer.js';

/** What a session compiles: enough to describe and export its executable. */
export interface SessionGraph {
  readonly kind: Executable['kind'];
  /** The placed graph, before patterns. */
  readonly graph: Graph;
  readonly inputSignature: readonly TensorSignature[];
  /** The host weights by IR parameter name. */
  readonly variables: ReadonlyMap<string, tf.Variable>;
  readonly options: Options;
  readonly optimizer: Optimizer | undefined;
}

/** The weights of a graph, in the order its parameters appear. */
function parameters(graph: Graph, variables: ReadonlyMap<string, tf.Variable>): ParameterSpec[] {
  return [...paramValues(graph).keys()].map((name) => {
    const v = variables.get(name)!;
    return { name, shape: [...v.shape], dtype: v.dtype, trainable: v.trainable };
  });
}

/** The contents of the executable file of a session's executable. */
export function executableFileContents(session: SessionGraph, executable: Executable): ExecutableFileContents {
  return {
    executable,
    parameters: parameters(session.graph, session.variables),
    options: session.options.toJSON(),
    ...(session.optimizer ? { optimizer: optimizerConfig(session.optimizer) } : {}),
    backend: tf.getBackend(),
    createdUnixMs: Date.now(),
  };
}

/** The first compile-affecting option that differs between two options' JSON, as text. */
function optionDifference(file: unknown, session: unknown): string | undefined {
  const a = compileAffectingOptions(file as object);
  const b = compileAffectingOptions(session as object);
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const [x, y] = [stringifyLossless(a[key]), stringifyLossless(b[key])];
    if (x !== y) return `option ${key} is ${x} in the file but ${y} in the session`;
  }
  return undefined;
}

/**
 * The executable of the file `path` (its contents `contents`) for `session`,
 * with its weights renamed to the session's; an error naming the file and
 * the first difference when it was compiled from another model or with
 * other options.
 */
export function sessionExecutableFromFile(path: string, contents: ExecutableFileContents, session: SessionGraph): Executable {
  const { executable } = contents;
  const file: ModelDescription = {
    kind: executable.kind,
    inputs: executable.inputSignature,
    outputs: outputSignature(executable.graph),
    parameters: contents.parameters,
    replicaGroupings: executable.replicaGroupings,
  };
  const mine: ModelDescription = {
    kind: session.kind,
    inputs: session.inputSignature,
    outputs: outputSignature(session.graph),
    parameters: parameters(session.graph, session.variables),
    replicaGroupings: {},
  };
  const renaming = matchModel(path, file, mine);
  const difference = optionDifference(contents.options, session.options.toJSON());
  if (difference) throw new PopartException(`${path} was compiled with other options than this session's: ${difference}`, { location: path });
  return renameExecutableParameters(executable, (name) => renaming.get(name) ?? name);
}
