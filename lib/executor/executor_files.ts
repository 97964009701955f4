/**
 * An executor's files: exporting the compiled executable (with or without
 * its model), attaching an exported executable instead of compiling,
 * checkpoints of the device state, and saving the host model in tfjs's own
 * format. Every file is written atomically; in a multi-instance run only
 * instance 0 writes.
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../common/errors.js';
import { getLogger } from '../common/log.js';
import { isLayersModel } from '../trace/model_function.js';
import { readCheckpointFile, writeCheckpointFile } from '../files/checkpoint_file.js';
import { mapDeviceState } from '../executable/device_state.js';
import { readExecutableFile, writeExecutableFile, type ExecutableFileContents } from '../files/executable_file.js';
import { renameExecutableParameters, renameGraphParameters } from '../executable/parameter_renaming.js';
import { tensorFromData } from '../files/tensor_data_conversion.js';
import type { NestedTensors } from '../trace/nested_values.js';
import { exportFilePath } from '../files/export_path.js';
import { checkpointContents, executableFileContents, splitExportArguments, type CompileAndExportOptions, type ExportSource } from './executable_export.js';
import '../files/file_system_io.js';
import { compiledArguments } from './nested_arguments.js';
import { checkCallInputs } from './call_inputs_check.js';
import { tracedInputCount } from './executor_trace.js';
import type { Compiled } from './executable_install.js';
import { syncHostWeights } from './device_weights.js';
import { checkpointCompileInputs, restoreCheckpoint } from './checkpoint_restore.js';
import { matchExecutableFile } from './executable_file_match.js';
import { ensureCompiled, ensureOptimizer, install } from './executor_lifecycle.js';
import { copyWeightsToHost } from './executor_weight_sync.js';
import type { ExecutorState } from './executor_state.js';

const log = getLogger('poptfjs');

/** What an export or checkpoint of the compiled state reads. */
function exportSource(state: ExecutorState, compiled: Compiled): ExportSource {
  return {
    model: state.model,
    executable: compiled.executable,
    trace: compiled.trace,
    options: state.options,
    optimizer: state.optimizer,
    engine: compiled.engine,
    variables: compiled.variables,
  };
}

/** Compiles the model for inputs like those of `args` and writes its executable (and by default its model) to `path`. */
export async function compileAndExport(state: ExecutorState, path: string, args: Array<NestedTensors | CompileAndExportOptions>): Promise<void> {
  const { inputs, options } = splitExportArguments(args);
  const compiled = await ensureCompiled(state, inputs);
  checkCallInputs(compiled.executable, compiledArguments(inputs, compiled.executable));
  if (state.instances.skipsWriting(`compileAndExport(${path})`)) return;
  const exportModel = options.exportModel ?? true;
  if (exportModel) syncHostWeights(state.model);
  const file = exportFilePath(path);
  writeExecutableFile(file, executableFileContents(exportSource(state, compiled), exportModel));
  log.info(`exported the ${compiled.executable.kind} executable of '${compiled.executable.modelName}' to ${file}${exportModel ? ' with its model' : ''}`);
}

/** Attaches the executable exported to `path` to the freshly wrapped model instead of compiling it. */
export async function loadExecutable(state: ExecutorState, path: string): Promise<void> {
  state.assertUsable('loadExecutable');
  if (state.compiled || state.compiling) {
    throw new PoptfjsError(`loadExecutable(${path}): this executor is already compiled; wrap the model again to load an executable`, { type: 'executor' });
  }
  const file = readExecutableFile(path);
  const { traced, tracedModel, parameters, names } = await matchExecutableFile({
    path,
    file,
    model: state.model,
    training: state.training,
    loss: state.loss,
    replicaGroupings: state.replicaGroupings,
    settings: state.options.settings,
    optionsData: state.options.toJSON(),
  });
  ensureOptimizer(state, traced);
  const executable = renameExecutableParameters(file.executable, (n) => names.get(n) ?? n);
  install(state, executable, traced.variables, {
    parameters,
    graph: traced.graph,
    inputCount: tracedInputCount(tracedModel, state.training, state.loss, executable.inputSignature.length),
  });
  log.info(`loaded the ${executable.kind} executable of '${executable.modelName}' from ${path}`);
}

/** Attaches the executable of `file` to the model rebuilt from it (variables by the file's parameter names) and restores the exported device state. */
export function attachExportedExecutable(state: ExecutorState, file: ExecutableFileContents, path: string, variables: ReadonlyMap<string, tf.Variable>): void {
  const rename = (n: string) => variables.get(n)?.name ?? n;
  const executable = renameExecutableParameters(file.executable, rename);
  const renamed = new Map([...variables.values()].map((v) => [v.name, v]));
  const parameters = file.parameters.map((p) => ({ ...p, name: rename(p.name) }));
  const exported = file.model!;
  const compiled = install(state, executable, renamed, { parameters, graph: renameGraphParameters(exported.forwardGraph, rename), inputCount: exported.inputCount });
  if (file.deviceState) compiled.engine.importState(mapDeviceState(file.deviceState, tensorFromData, rename));
  log.info(`loaded the ${executable.kind} executable of '${executable.modelName}' and its model from ${path}`);
}

/** Writes a checkpoint of the device state to `path`; an error after a fault lost that state. */
export function saveCheckpoint(state: ExecutorState, path: string): void {
  const compiled = state.requireCompiled('saveCheckpoint');
  const recovery = state.binding?.device.pendingRecovery;
  if (recovery !== undefined) {
    throw new PoptfjsError(
      `saveCheckpoint(${path}): the device lost its state in a fault; recover (${recovery}) with detachFromDevice() and attachToDevice(), or load the last checkpoint`,
      {
        type: 'device',
      },
    );
  }
  if (state.instances.skipsWriting(`saveCheckpoint(${path})`)) return;
  writeCheckpointFile(path, checkpointContents(exportSource(state, compiled)));
  log.info(`saved a checkpoint of '${compiled.executable.modelName}' to ${path}`);
}

/** Restores the device state of the checkpoint at `path` (compiling first if needed) and writes its weights to the host model. */
export async function loadCheckpoint(state: ExecutorState, path: string): Promise<void> {
  state.assertUsable('loadCheckpoint');
  const checkpoint = readCheckpointFile(path);
  let compiled = state.compiled;
  if (!compiled) {
    const inputs = checkpointCompileInputs(path, checkpoint, state.model);
    try {
      compiled = await ensureCompiled(state, inputs);
    } finally {
      tf.dispose(inputs);
    }
  }
  restoreCheckpoint(path, checkpoint, compiled, state.optimizer);
  state.weights.forgetOtherNewest();
  copyWeightsToHost(state);
  log.info(`restored '${compiled.executable.modelName}' from the checkpoint ${path} (after ${checkpoint.deviceState.iterations} device iterations)`);
}

/** Saves the host model, with the newest weights, through a tfjs IO handler (a tf.LayersModel only). */
export async function saveModel(state: ExecutorState, url: string | tf.io.IOHandler): Promise<tf.io.SaveResult> {
  state.assertUsable('saveModel');
  if (!isLayersModel(state.model)) {
    throw new PoptfjsError('saveModel: the wrapped model is a function, which tfjs cannot save; save its executable with compileAndExport(path, ...inputs)', {
      type: 'executor',
    });
  }
  syncHostWeights(state.model);
  return state.model.save(url);
}
