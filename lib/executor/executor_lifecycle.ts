/**
 * An executor's lifecycle: compiling the model (traced on one micro-batch,
 * compiled through the executable cache, checked against host memory) and
 * installing an executable on an engine and device, detaching from the
 * device and attaching again, and destroying the executor.
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../common/errors.js';
import { withLogFile } from '../common/log.js';
import { initBackend } from '../backend/backend_selection.js';
import { withEngineOptions } from '../options/engine_options.js';
import type { Executable } from '../executable/executable.js';
import { isLayersModel, modelName, type WrappableModel } from '../trace/model_function.js';
import type { TracedModel } from '../trace/trace_model.js';
import { float16Declarations } from '../precision/float16_declarations.js';
import { bytesPerElement } from '../ir/graph.js';
import { CompileProgress, progressBar, type ProgressCallback } from '../compile/compile_progress.js';
import { executionSettings, type ExecutionSettings } from '../compile/execution_settings.js';
import type { ModelGraph } from '../compile/model_graph.js';
import type { OptionsSettings } from '../options/options_settings.js';
import { compileWithCache } from '../compile/cached_compile.js';
import { parameterSpecs } from '../files/parameter_spec.js';
import type { Structure } from '../trace/nested_values.js';
import { executorLogFile } from './log_file.js';
import { markHostWeightsCurrent } from './host_weight_access.js';
import { releaseExecutor } from './model_registry.js';
import type { ModelTraceRecord } from './executable_export.js';
import { argumentStructures, flatModel, flattenArguments, ioStructure } from './nested_arguments.js';
import { tracedInputCount, type ExecutorTraceRequest } from './executor_trace.js';
import { traceWithinHostMemory } from './compile_trace.js';
import { checkStepHostMemory, type HostMemoryCheckRequest } from './host_memory_check.js';
import { microBatchExamples } from './micro_batch_examples.js';
import { buildOptimizer, optimizerReduction, resetOptimizerState, unknownAttributeCheck } from './executor_optimizer.js';
import { installExecutable, type Compiled } from './executable_install.js';
import { ExecutorInstances } from './executor_instances.js';
import { logCompiled, writeCompileProfileReports } from './compile_reports.js';
import { exportCompiledGraphIfRequested } from './compiled_graph_export.js';
import { checkEveryNPipelining } from './every_n_pipelining.js';
import { copyWeightsToHostIfNeeded } from './executor_weight_sync.js';
import type { ExecutorState } from './executor_state.js';

/** The compiled state, compiling the model for inputs like `args` first (once, however many callers wait). */
export async function ensureCompiled(state: ExecutorState, args: readonly unknown[], progressCallback?: ProgressCallback): Promise<Compiled> {
  state.assertUsable('compile');
  if (state.compiled) return state.compiled;
  const structures = argumentStructures(args, state.model);
  const inputs = flattenArguments(args, structures);
  state.compiling ??= withLogFile(executorLogFile(state.options.settings), () => compileNow(state, inputs, structures, progressCallback)).finally(
    () => (state.compiling = undefined),
  );
  return state.compiling;
}

async function compileNow(state: ExecutorState, inputs: readonly tf.Tensor[], structures: readonly Structure[], progressCallback?: ProgressCallback): Promise<Compiled> {
  const started = performance.now();
  const progress = new CompileProgress(progressCallback, state.options.settings.showCompilationProgressBar ? progressBar() : undefined);
  await initBackend(state.options.settings.backend);
  const settings = withEngineOptions(state.options.settings);
  const execution = executionSettings(settings, state.training);
  const { factors } = execution;
  const { split, micro, examples } = microBatchExamples(inputs, structures, factors);
  const flat = isLayersModel(state.model) ? undefined : flatModel(state.model, structures, state.training, state.loss);
  const tracedModel = flat?.fn ?? state.model;
  // The optimizer is known once the model is traced (a training executor without one builds it from the trace).
  const memoryCheck = (): HostMemoryCheckRequest => ({
    model: settings.modelName ?? modelName(state.model),
    training: state.training,
    examples,
    settings,
    factors,
    trainedWeights: state.optimizer ? new Set(state.optimizer.parameterNames) : undefined,
    optimizerSlots: state.optimizer?.stateSlots().length ?? 0,
    inputBytes: inputs.reduce((n, x) => n + x.size * bytesPerElement(x.dtype), 0),
  });
  let traced: TracedModel;
  try {
    traced = await traceWithinHostMemory(traceRequest(state, tracedModel, examples), memoryCheck());
  } finally {
    if (split) tf.dispose(examples);
  }
  progress.step();
  ensureOptimizer(state, traced);
  const parameters = parameterSpecs(traced.variables);
  const { executable: compiledExecutable, source } = await compileWithCache(
    modelGraph(state, { settings, execution, traced, examples, micro, inputs }),
    progress,
    state.options,
    parameters,
  );
  const executable = flat ? { ...compiledExecutable, ioStructure: ioStructure(structures, flat) } : compiledExecutable;
  checkEveryNPipelining(executable);
  state.hostMemoryEstimate = checkStepHostMemory(executable.graph, traced.variables, memoryCheck());
  const compiled = install(state, executable, traced.variables, {
    parameters,
    graph: traced.graph,
    inputCount: tracedInputCount(tracedModel, state.training, state.loss, executable.inputSignature.length),
  });
  state.compilations++;
  state.compileSeconds = (performance.now() - started) / 1000;
  progress.step();
  writeCompileProfileReports(settings, executable);
  exportCompiledGraphIfRequested(executable.graph, executable.modelName, traced.variables);
  logCompiled(executable, source, traced.variables.size, micro, started);
  return compiled;
}

/** What {@link modelGraph} builds the compiled model's graph from: the settings, the trace and the micro-batch it was traced on. */
interface TracedMicroBatch {
  readonly settings: OptionsSettings;
  readonly execution: ExecutionSettings;
  readonly traced: TracedModel;
  /** The micro-batch the model was traced on. */
  readonly examples: readonly tf.Tensor[];
  readonly micro: number;
  /** The call's inputs (whole host batches). */
  readonly inputs: readonly tf.Tensor[];
}

/** The model graph to compile: the traced graph with the executor's settings, optimizer, replica groupings and float16 declarations. */
function modelGraph(state: ExecutorState, { settings, execution, traced, examples, micro, inputs }: TracedMicroBatch): ModelGraph {
  return {
    kind: state.training ? 'training' : 'inference',
    modelName: settings.modelName ?? modelName(state.model),
    graph: traced.graph,
    inputSignature: examples.map((x) => ({ shape: [...x.shape], dtype: x.dtype })),
    microBatchSize: micro,
    execution: optimizerReduction(state.optimizer, execution),
    settings,
    optimizer: state.optimizer,
    replicaGroupings: state.replicaGroupings,
    float16: float16Declarations(traced, inputs, settings.precision.runningStatisticsAlwaysFloat),
    weightNames: traced.weightNames,
  };
}

/** What tracing `model` (the wrapped model, or a function model taking flat tensors) on `examples` (one micro-batch) takes of the executor. */
function traceRequest(state: ExecutorState, model: WrappableModel, examples: readonly tf.Tensor[]): Omit<ExecutorTraceRequest, 'afterKernel'> {
  return { wrapped: state.model, model, training: state.training, loss: state.loss, examples, replicaGroupings: state.replicaGroupings };
}

/**
 * A training executor without an optimizer builds one over the traced
 * model's trainable weights: the given tfjs optimizer's equivalent, else
 * the one its layers model was compiled with, else `SGD(lr 0.01)`.
 */
export function ensureOptimizer(state: ExecutorState, traced: TracedModel): void {
  if (state.training && !state.optimizer) state.optimizer = buildOptimizer(state.model, state.optimizerBuilder, traced, unknownAttributeCheck(state.options.settings));
}

/**
 * Loads a compiled executable on the device with the weights of
 * `variables`, and makes it the executor's (named as `opts.modelName`
 * says, a run-time option, when it is set).
 */
export function install(state: ExecutorState, executable: Executable, variables: ReadonlyMap<string, tf.Variable>, trace: ModelTraceRecord): Compiled {
  const installed = installExecutable({ executable, variables, trace, settings: state.options.settings, training: state.training, optimizer: state.optimizer });
  state.instances = new ExecutorInstances(installed.instances);
  state.compiledOptimizer = installed.compiledOptimizer;
  state.weights.loadedCurrent();
  state.compiled = installed.compiled;
  return state.compiled;
}

/** Detaches from the device, a training executor copying its weights to the host first (unless a fault lost them). */
export function detachFromDevice(state: ExecutorState): void {
  state.requireCompiled('detachFromDevice');
  const device = state.binding!.device;
  if (!device.isAttached) throw new PoptfjsError('detachFromDevice: the device is not attached', { type: 'device' });
  // After a fault the device's weights are gone (the fault's error said so): the host keeps those last copied.
  if (state.training && device.pendingRecovery !== undefined) markHostWeightsCurrent(state.holder);
  else if (state.training) copyWeightsToHostIfNeeded(state);
  device.detach();
  state.compiled!.engine.stopWorkerIpus();
  state.reloadOnAttach = device.pendingRecovery !== undefined ? 'after-fault' : 'weights';
}

/** Attaches to the device again and loads the host weights; after a fault the optimizer state starts afresh. */
export function attachToDevice(state: ExecutorState): void {
  const compiled = state.requireCompiled('attachToDevice');
  const device = state.binding!.device;
  if (device.isAttached) throw new PoptfjsError('attachToDevice: the device is already attached', { type: 'device' });
  device.attach();
  if (state.reloadOnAttach === 'after-fault') resetOptimizerState(compiled.engine, compiled.executable, state.optimizer);
  if (state.reloadOnAttach !== undefined) state.weights.load(compiled);
  state.reloadOnAttach = undefined;
}

/** Copies the trained weights to the host model, frees the device state and releases the model. */
export function destroyExecutor(state: ExecutorState): void {
  if (state.destroyed) return;
  copyWeightsToHostIfNeeded(state);
  state.binding?.device.detach();
  if (state.compiled) state.optimizer?.detachStateStore(state.compiled.engine);
  state.compiled?.engine.destroy();
  state.anchored.dispose();
  state.compiled = undefined;
  state.destroyed = true;
  releaseExecutor(state.model, state.holder);
}
