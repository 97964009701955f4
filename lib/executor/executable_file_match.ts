/**
 * An executable file against a freshly wrapped model, before the executable
 * is attached to it instead of compiling: the model is traced on inputs like
 * the file's, its kind, signature, parameters and output structure must match
 * the file's (an error names the first difference), and the compile options
 * that differ from the file's are named in a warning (the file's apply).
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../common/errors.js';
import { getLogger } from '../common/log.js';
import { initBackend } from '../backend/backend_selection.js';
import { hostHeap } from '../backend/host_heap.js';
import type { ExecutableFileContents } from '../files/executable_file.js';
import { parameterSpecs, type ParameterSpec } from '../files/parameter_spec.js';
import type { OptionsSettings } from '../options/options_settings.js';
import { executableMemoryContext, guardHostMemory } from '../host_memory/host_memory_error.js';
import type { ReplicaGrouping } from '../executable/replica_grouping.js';
import type { LossSpec } from '../trace/loss_function.js';
import { isLayersModel, type WrappableModel } from '../trace/model_function.js';
import type { TracedModel } from '../trace/trace_model.js';
import { describeSignature } from './call_inputs_check.js';
import { checkDeclaredInputs } from './declared_inputs_check.js';
import { compileAffectingOptions } from '../compile/executable_cache_key.js';
import { traceExecutorModel } from './executor_trace.js';
import { matchKind, matchModel, outputSignature } from '../files/model_matching.js';
import { flatModel, matchOutputStructure } from './nested_arguments.js';

const log = getLogger('poptfjs');

/** The file to match and the executor it is matched against. */
export interface ExecutableFileMatchRequest {
  /** Where the file was read from, for messages. */
  readonly path: string;
  readonly file: ExecutableFileContents;
  /** The wrapped model. */
  readonly model: WrappableModel;
  readonly training: boolean;
  readonly loss: LossSpec | undefined;
  /** The replica groupings set per weight of the model. */
  readonly replicaGroupings: Readonly<Record<string, ReplicaGrouping>>;
  /** The executor's options settings. */
  readonly settings: OptionsSettings;
  /** The executor's options as data (`Options.toJSON()`), to compare with the file's. */
  readonly optionsData: object;
}

/** The wrapped model as traced on the file's inputs, matched with the file. */
export interface MatchedExecutableFile {
  readonly traced: TracedModel;
  /** The model that was traced: the wrapped model, or a function model taking flat tensors. */
  readonly tracedModel: WrappableModel;
  readonly parameters: ParameterSpec[];
  /** The model's parameter name of each of the file's parameter names. */
  readonly names: Map<string, string>;
}

/** Warns about the compile options of an executor (`optionsData`) that differ from those the loaded executable of `file` was compiled with. */
function warnIgnoredOptions(optionsData: object, file: ExecutableFileContents, path: string): void {
  const mine = compileAffectingOptions(optionsData);
  const theirs = compileAffectingOptions(file.options as object);
  // The offline target is where the file was compiled, not a choice this executor makes differently.
  const differ = [...new Set([...Object.keys(mine), ...Object.keys(theirs)])].filter(
    (k) => k !== 'offlineIpuVersion' && JSON.stringify(mine[k]) !== JSON.stringify(theirs[k]),
  );
  if (differ.length > 0) {
    log.warn(
      `loadExecutable(${path}): the executable was compiled with other values of ${differ.map((k) => `'${k}'`).join(', ')}; those of the file apply (only run-time options of this executor are used)`,
    );
  }
}

/** Traces the wrapped model on inputs like the file's and matches it with the file (an error names the first difference). */
export async function matchExecutableFile(request: ExecutableFileMatchRequest): Promise<MatchedExecutableFile> {
  const { path, file, model, training, loss, replicaGroupings, settings } = request;
  matchKind(path, file.executable.kind, training ? 'training' : 'inference');
  await initBackend(settings.backend);
  checkDeclaredInputs(path, file.executable.inputSignature, model);
  const examples = file.executable.inputSignature.map((s) => tf.zeros([...s.shape], s.dtype));
  const io = file.executable.ioStructure;
  const flat = io && !isLayersModel(model) ? flatModel(model, io.inputs, training, loss) : undefined;
  const tracedModel = flat?.fn ?? model;
  let traced: TracedModel;
  try {
    const heap = hostHeap();
    const afterKernel = () => guardHostMemory(heap, 0, () => executableMemoryContext(file.executable, 'tracing', settings.parallelIpus));
    traced = await traceExecutorModel({ wrapped: model, model: tracedModel, training, loss, examples, replicaGroupings, afterKernel });
  } catch (error) {
    throw new PoptfjsError(
      `${path} does not match the wrapped model: tracing it on the file's inputs (${describeSignature(file.executable.inputSignature)}) failed: ${error instanceof Error ? error.message : String(error)}`,
      { type: 'executor', location: path, cause: error },
    );
  } finally {
    tf.dispose(examples);
  }
  const parameters = parameterSpecs(traced.variables);
  const names = matchModel(
    path,
    {
      kind: file.executable.kind,
      inputs: file.executable.inputSignature,
      outputs: outputSignature(file.executable.graph).slice(0, file.executable.outputCount),
      parameters: file.parameters,
      replicaGroupings: file.executable.replicaGroupings,
    },
    {
      kind: training ? 'training' : 'inference',
      inputs: file.executable.inputSignature,
      outputs: outputSignature(traced.graph),
      parameters,
      replicaGroupings,
    },
  );
  if (io && flat) matchOutputStructure(path, io.outputs, flat.outputs());
  warnIgnoredOptions(request.optionsData, file, path);
  return { traced, tracedModel, parameters, names };
}
