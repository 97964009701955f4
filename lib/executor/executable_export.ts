/**
 * What an executor writes into files: the contents of an exported
 * executable (`compileAndExport`) or cache entry, and of a checkpoint
 * (`saveCheckpoint`), from the executor's compiled state.
 */
import * as tf from '@tensorflow/tfjs';
import type { Optimizer } from '../../optim/optimizer.js';
import type { Graph } from '../ir/graph.js';
import type { Options } from '../options/options.js';
import type { CheckpointContents } from '../files/checkpoint_file.js';
import { deviceStateTensors, mapDeviceState } from '../executable/device_state.js';
import type { Executable } from '../executable/executable.js';
import type { ExecutableFileContents } from '../files/executable_file.js';
import type { Engine } from '../engine/engine.js';
import { optimizerConfig } from '../files/optimizer_config.js';
import type { ParameterSpec } from '../files/parameter_spec.js';
import { tensorDataOf } from '../files/tensor_data_conversion.js';
import { modelIdentity } from './model_identity.js';
import { forwardGraph } from './model_reconstruction.js';
import { splitTrailingOptions } from './nested_arguments.js';

/** Options of `compileAndExport`. */
export interface CompileAndExportOptions {
  /**
   * Whether the file also holds the model (its traced forward pass, its
   * weights and the device state), so `load(path)` can restore everything
   * (default true). Without it, wrap the model again and call
   * `executor.loadExecutable(path)`.
   */
  readonly exportModel?: boolean;
}

/** The keys of {@link CompileAndExportOptions}: a last argument of `compileAndExport` with only these keys (and no tensor) is the options. */
export const EXPORT_OPTION_KEYS: ReadonlyArray<keyof CompileAndExportOptions> = ['exportModel'];

/** The inputs and the options object of `compileAndExport(path, ...inputs, options?)` (see {@link splitTrailingOptions}). */
export function splitExportArguments(args: readonly unknown[]): { inputs: unknown[]; options: CompileAndExportOptions } {
  const { inputs, options } = splitTrailingOptions<CompileAndExportOptions>(args, EXPORT_OPTION_KEYS);
  return { inputs, options: options ?? {} };
}

/** What an executor keeps of the model it compiled, to export it. */
export interface ModelTraceRecord {
  /** The parameters, with the executable's names, in trace order. */
  readonly parameters: readonly ParameterSpec[];
  /** The traced graph (or its forward pass). */
  readonly graph: Graph;
  /** How many of the graph's inputs the model takes. */
  readonly inputCount: number;
}

/** The compiled state an export reads. */
export interface ExportSource {
  readonly model: object;
  readonly executable: Executable;
  readonly trace: ModelTraceRecord;
  readonly options: Options;
  readonly optimizer: Optimizer | undefined;
  readonly engine: Engine;
  /** Host variables by parameter name (holding the newest weights). */
  readonly variables: ReadonlyMap<string, tf.Variable>;
}

/** The contents of an executable file: with `exportModel`, the model, its weights and the device state too. */
export function executableFileContents(source: ExportSource, exportModel: boolean): ExecutableFileContents {
  const base = {
    executable: source.executable,
    parameters: source.trace.parameters,
    options: source.options.toJSON(),
    ...(source.optimizer ? { optimizer: optimizerConfig(source.optimizer) } : {}),
    backend: tf.getBackend(),
    createdUnixMs: Date.now(),
  };
  if (!exportModel) return base;
  const state = source.engine.exportState({ weights: false });
  try {
    return {
      ...base,
      model: {
        modelId: modelIdentity(source.model),
        inputCount: source.trace.inputCount,
        forwardGraph: forwardGraph(source.trace.graph, source.trace.inputCount),
        weights: new Map(source.trace.parameters.map((p) => [p.name, tensorDataOf(source.variables.get(p.name)!)])),
      },
      deviceState: mapDeviceState(state, tensorDataOf),
    };
  } finally {
    tf.dispose(deviceStateTensors(state));
  }
}

/** The contents of a checkpoint of the compiled state. */
export function checkpointContents(source: ExportSource): CheckpointContents {
  const { executable } = source;
  const state = source.engine.exportState({ weights: true });
  try {
    return {
      modelName: executable.modelName,
      kind: executable.kind,
      inputSignature: executable.inputSignature,
      microBatchSize: executable.microBatchSize,
      factors: executable.factors,
      parameters: source.trace.parameters,
      ...(source.optimizer ? { optimizer: optimizerConfig(source.optimizer) } : {}),
      deviceState: mapDeviceState(state, tensorDataOf),
      backend: tf.getBackend(),
      createdUnixMs: Date.now(),
    };
  } finally {
    tf.dispose(deviceStateTensors(state));
  }
}
