/**
 * `PoplarExecutor`: a tfjs model wrapped for the simulated IPU, returned by
 * `trainingModel` and `inferenceModel`.
 *
 * The first call compiles: the model is traced on one micro-batch into the IR
 * and loaded on the device with a copy of the host weights. Every call then
 * splits the host batch into micro-batches and runs them on the device; the
 * weights stay there, and a training step only marks the host model's stale:
 * they are copied back when the host model's weights are next read
 * (`copyWeightsToHostIfNeeded`), or by `copyWeightsToHost()`.
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../common/errors.js';
import { getLogger, withLogFile } from '../common/log.js';
import { initBackend } from '../backend/backend_selection.js';
import { irText } from '../ir/ir_text.js';
import type { Device } from '../ipu/device.js';
import { OutOfMemoryError } from '../ipu/out_of_memory_error.js';
import type { Options } from '../options/options.js';
import type { OptionsSettings } from '../options/options_settings.js';
import { withEngineOptions } from '../options/engine_options.js';
import { summaryReport } from '../report/summary_report.js';
import type { Executable } from '../executable/executable.js';
import type { ReplicaGrouping } from '../executable/replica_grouping.js';
import { planText } from '../report/plan_text.js';
import type { LossSpec } from '../trace/loss_function.js';
import { isLayersModel, modelName, type WrappableModel } from '../trace/model_function.js';
import type { TracedModel } from '../trace/trace_model.js';
import type { CompiledOptimizerAttributes } from '../../optim/compiled_attributes.js';
import type { Optimizer } from '../../optim/optimizer.js';
import type { OptimizerBuilder } from '../../optim/tfjs_optimizer.js';
import type { PoptfjsDataType } from '../precision/half.js';
import { float16Declarations } from '../precision/float16_declarations.js';
import { bytesPerElement } from '../ir/graph.js';
import type { HostMemoryEstimate } from '../host_memory/host_memory_estimate.js';
import { CallableInstance } from './callable_instance.js';
import { moduleRepr } from '../trace/module_repr.js';
import { COMPILE_OPTION_KEYS, CompileProgress, progressBar, type CompileOptions, type ProgressCallback } from '../compile/compile_progress.js';
import type { DeviceBinding } from '../engine/device_binding.js';
import type { Engine } from '../engine/engine.js';
import { executorLogFile } from './log_file.js';
import { executionSettings } from '../compile/execution_settings.js';
import { claimTraining, releaseExecutor, type WeightHolder } from './model_registry.js';
import { hostWeightsStale, markHostWeightsCurrent } from './host_weight_access.js';
import { ParameterHandle } from './parameter_handle.js';
import { readCheckpointFile, writeCheckpointFile } from '../files/checkpoint_file.js';
import { mapDeviceState } from '../executable/device_state.js';
import { readExecutableFile, writeExecutableFile, type ExecutableFileContents } from '../files/executable_file.js';
import { parameterSpecs } from '../files/parameter_spec.js';
import { renameExecutableParameters, renameGraphParameters } from '../executable/parameter_renaming.js';
import { tensorFromData } from '../files/tensor_data_conversion.js';
import type { NestedTensors, Structure } from '../trace/nested_values.js';
import { compileWithCache } from '../compile/cached_compile.js';
import { exportFilePath } from '../files/export_path.js';
import {
  checkpointContents,
  executableFileContents,
  splitExportArguments,
  type CompileAndExportOptions,
  type ExportSource,
  type ModelTraceRecord,
} from './executable_export.js';
import '../files/file_system_io.js';
import { argumentStructures, callOutput, compiledArguments, flatModel, flattenArguments, ioStructure, splitTrailingOptions } from './nested_arguments.js';
import { checkCallInputs } from './call_inputs_check.js';
import { hostVariable } from './host_variable.js';
import { tracedInputCount, type ExecutorTraceRequest } from './executor_trace.js';
import { traceWithinHostMemory } from './compile_trace.js';
import { checkStepHostMemory, type HostMemoryCheckRequest } from './host_memory_check.js';
import { microBatchExamples } from './micro_batch_examples.js';
import {
  buildOptimizer,
  checkReplacementOptimizer,
  optimizerReduction,
  replacementOptimizer,
  resetOptimizerState,
  switchOptimizer,
  takeOptimizer,
  unknownAttributeCheck,
} from './executor_optimizer.js';
import { installExecutable, type Compiled } from './executable_install.js';
import { ExecutorInstances } from './executor_instances.js';
import { DeviceWeights, syncHostWeights } from './device_weights.js';
import { checkpointCompileInputs, restoreCheckpoint } from './checkpoint_restore.js';
import { matchExecutableFile } from './executable_file_match.js';
import { logCompiled, writeCompileProfileReports } from './compile_reports.js';
import { CallAnchors } from './call_anchors.js';

const log = getLogger('poptfjs');

/**
 * What an executor returns: one tensor, or a list when the model returns
 * several. A function model returning arrays and plain objects of tensors
 * gets its output in that structure (`NestedTensors`, typed by the
 * executor's type parameter).
 */
export type ModelOutput = tf.Tensor | tf.Tensor[];

/** What a training executor returns: the model's output and the loss. */
export type TrainingOutput = [ModelOutput, tf.Tensor];

/** The settings an executor is created with. */
export interface ExecutorConfig {
  readonly model: WrappableModel;
  readonly options: Options;
  readonly training: boolean;
  /** The optimizer, or the builder of one for the traced model's weights (a tfjs optimizer's equivalent). */
  readonly optimizer?: Optimizer | OptimizerBuilder | undefined;
  readonly loss?: LossSpec | undefined;
}

/** A model wrapped for the simulated IPU. Call it like the model: `await executor(x, target)`. */
export class PoplarExecutor extends CallableInstance implements WeightHolder {
  /** The wrapped model (a tf.LayersModel or a function). */
  readonly model: WrappableModel;
  /** The options, frozen when the model was wrapped. */
  readonly options: Options;
  /** True for a `trainingModel`, false for an `inferenceModel`. */
  readonly training: boolean;
  private optimizer: Optimizer | undefined;
  /** Builds the optimizer when the model is first compiled, if none was given. */
  private readonly optimizerBuilder: OptimizerBuilder | undefined;
  /** The optimizer attribute values the model was compiled with. */
  private compiledOptimizer: CompiledOptimizerAttributes | undefined;
  private readonly loss: LossSpec | undefined;
  private compiled: Compiled | undefined;
  private compiling: Promise<Compiled> | undefined;
  private destroyed = false;
  /** The device's weights against the host model's. */
  private readonly weights: DeviceWeights;
  private compilations = 0;
  private compileSeconds = 0;
  private hostMemoryEstimate: HostMemoryEstimate | undefined;
  private calls = 0;
  /** The anchored tensors of the last call, by short name. */
  private readonly anchored = new CallAnchors();
  private readonly replicaGroupings: Record<string, ReplicaGrouping> = {};
  /** What {@link PoplarExecutor.attachToDevice} must reload: the weights, and after a fault the optimizer state too. */
  private reloadOnAttach: 'weights' | 'after-fault' | undefined;
  /** This process's place in a multi-instance run (known once compiled). */
  private instances = new ExecutorInstances(undefined);

  /** @internal Use `trainingModel` or `inferenceModel`. */
  constructor(config: ExecutorConfig) {
    super();
    this.model = config.model;
    this.options = config.options;
    this.training = config.training;
    this.weights = new DeviceWeights(this.model, this);
    this.optimizer = typeof config.optimizer === 'function' ? undefined : config.optimizer;
    this.optimizerBuilder = typeof config.optimizer === 'function' ? config.optimizer : undefined;
    takeOptimizer(this.optimizer, this.options.settings);
    this.loss = config.loss;
    if (!config.options.isFrozen()) config.options.freeze();
    if (this.training) claimTraining(this.model, modelName(this.model), this);
  }

  /** The device binding of the engine, once compiled. */
  private get binding(): DeviceBinding | undefined {
    return this.compiled?.engine.deviceBinding;
  }

  /** The wrapped model with its block annotations, as PopTorch's `repr` of a wrapped model (`moduleRepr`). */
  override toString(): string {
    return moduleRepr(this.model);
  }

  /** True once {@link PoplarExecutor.destroy} was called. */
  get isDestroyed(): boolean {
    return this.destroyed;
  }

  /** True once the model was compiled (by {@link PoplarExecutor.compile} or the first call). */
  isCompiled(): boolean {
    return this.compiled !== undefined;
  }

  /** How many times this executor compiled its model. */
  get compileCount(): number {
    return this.compilations;
  }

  /** The compiled executable (an error before compilation). */
  get executable(): Executable {
    return this.requireCompiled('executable').executable;
  }

  /** The engine the compiled model runs on (an error before compilation): its programs, streams, profile and simulated errors at the Poplar level. */
  get engine(): Engine {
    return this.requireCompiled('engine').engine;
  }

  /**
   * A weight of the model by its tf.Variable name, to set per-parameter
   * options such as `replicaGrouping` before compiling.
   */
  parameter(name: string): ParameterHandle {
    this.assertUsable('parameter');
    hostVariable(this.model, name);
    return new ParameterHandle(name, (grouping) => {
      if (this.compiled) {
        throw new PoptfjsError(`parameter('${name}').replicaGrouping: set replica groupings before the model is compiled`, { type: 'replication' });
      }
      this.replicaGroupings[name] = grouping;
    });
  }

  /** The execution plan as text: stages, IPUs and the schedule table. */
  planText(): string {
    const { placement, schedule, streamingTransfers: transfers } = this.requireCompiled('planText').executable;
    return planText(placement, schedule, transfers);
  }

  /** How often each IR pattern fired when the model was compiled, by pattern name. */
  patterns(): Readonly<Record<string, number>> {
    return this.requireCompiled('patterns').executable.firedPatterns;
  }

  /** The device the model was compiled for (after compiling). */
  get device(): Device {
    this.requireCompiled('device');
    return this.binding!.device;
  }

  /** True while the executor is attached to its device. */
  isAttachedToDevice(): boolean {
    return this.binding?.device.isAttached ?? false;
  }

  /**
   * Detaches from the device so other processes can use its IPUs. A training
   * executor first copies its weights to the host (unless a fault lost them).
   * The next call attaches again, as {@link PoplarExecutor.attachToDevice} does.
   */
  detachFromDevice(): void {
    this.requireCompiled('detachFromDevice');
    const device = this.binding!.device;
    if (!device.isAttached) throw new PoptfjsError('detachFromDevice: the device is not attached', { type: 'device' });
    // After a fault the device's weights are gone (the fault's error said so): the host keeps those last copied.
    if (this.training && device.pendingRecovery !== undefined) markHostWeightsCurrent(this);
    else if (this.training) this.copyWeightsToHostIfNeeded();
    device.detach();
    this.compiled!.engine.stopWorkerIpus();
    this.reloadOnAttach = device.pendingRecovery !== undefined ? 'after-fault' : 'weights';
  }

  /**
   * Attaches to the device again and loads the model: the weights come from
   * the host; after a fault, the optimizer state starts afresh, as after
   * compiling (restore it from a checkpoint if needed).
   */
  attachToDevice(): void {
    const compiled = this.requireCompiled('attachToDevice');
    const device = this.binding!.device;
    if (device.isAttached) throw new PoptfjsError('attachToDevice: the device is already attached', { type: 'device' });
    device.attach();
    if (this.reloadOnAttach === 'after-fault') resetOptimizerState(compiled.engine, compiled.executable, this.optimizer);
    if (this.reloadOnAttach !== undefined) this.weights.load(compiled);
    this.reloadOnAttach = undefined;
  }

  /** Simulated cycles of one call on the target IPUs (a call must have run). */
  cycleCount(): number {
    const { executable } = this.requireCompiled('cycleCount');
    if (this.calls === 0) throw new PoptfjsError('cycleCount: the model has not run yet', { type: 'executor' });
    return executable.hardware.timeline.cycles;
  }

  /** Simulated latency of a call in seconds: `{ min, max, mean }` over the calls so far. */
  getComputeLatency(): { min: number; max: number; mean: number } {
    const { executable } = this.requireCompiled('getComputeLatency');
    if (this.calls === 0) throw new PoptfjsError('getComputeLatency: the model has not run yet', { type: 'executor' });
    const seconds = executable.hardware.timeline.duration;
    return { min: seconds, max: seconds, mean: seconds };
  }

  /** Seconds the compilation took (wall clock). */
  compilationTime(): number {
    this.requireCompiled('compilationTime');
    return this.compileSeconds;
  }

  /**
   * The summary report: memory per IPU, placement and schedule, and, when
   * profiling is enabled (`Options.enableProfiling` or
   * `POPTFJS_ENGINE_OPTIONS`), the simulated execution.
   */
  getSummaryReport(): string {
    const { executable, engine } = this.requireCompiled('getSummaryReport');
    const allReduce = this.instances.gradientAllReduce(executable, this.training);
    return summaryReport(executable, withEngineOptions(this.options.settings).profileDir !== undefined, engine.measuredOverlap(), allReduce);
  }

  /**
   * With `opts.parallelIpus(true)`, what the worker IPUs measured over the
   * last call: each IPU's busy time, the call's wall time and their overlap
   * (sum of busy time / wall time). Undefined before a call, or when the
   * model runs its IPUs in-process.
   */
  measuredOverlap(): ReturnType<Engine['measuredOverlap']> {
    return this.requireCompiled('measuredOverlap').engine.measuredOverlap();
  }

  /**
   * The host memory a step was estimated to need when the model was
   * compiled: per heap (the main thread's, each worker IPU's) and kind.
   * Undefined before compiling and for an executable loaded from a file.
   */
  hostMemory(): HostMemoryEstimate | undefined {
    return this.hostMemoryEstimate;
  }

  /** The optimizer of a training executor. */
  getOptimizer(): Optimizer | undefined {
    return this.optimizer;
  }

  private assertUsable(what: string): void {
    if (this.destroyed) {
      throw new PoptfjsError(`${what}: this executor was destroyed; wrap the model again to use it`, { type: 'executor' });
    }
  }

  private requireCompiled(what: string): Compiled {
    this.assertUsable(what);
    if (!this.compiled) {
      throw new PoptfjsError(`${what}: the model is not compiled yet; call compile(...inputs) or run it once`, { type: 'executor' });
    }
    return this.compiled;
  }

  /**
   * Compiles the model for inputs like `inputs` (a full host batch, as a call
   * would take, nested as a call nests them). Nothing is run on the device.
   * Compiling again is a no-op. A last argument that is a plain object whose
   * keys are all options of {@link CompileOptions} (`progress`) and that
   * holds no tensor is the options; any other object is an input.
   */
  async compile(...inputs: Array<NestedTensors | CompileOptions>): Promise<void> {
    const split = splitTrailingOptions<CompileOptions>(inputs, COMPILE_OPTION_KEYS);
    await this.ensureCompiled(split.inputs, split.options?.progress);
  }

  private async ensureCompiled(args: readonly unknown[], progressCallback?: ProgressCallback): Promise<Compiled> {
    this.assertUsable('compile');
    if (this.compiled) return this.compiled;
    const structures = argumentStructures(args, this.model);
    const inputs = flattenArguments(args, structures);
    this.compiling ??= withLogFile(executorLogFile(this.options.settings), () => this.compileNow(inputs, structures, progressCallback)).finally(
      () => (this.compiling = undefined),
    );
    return this.compiling;
  }

  private async compileNow(inputs: readonly tf.Tensor[], structures: readonly Structure[], progressCallback?: ProgressCallback): Promise<Compiled> {
    const started = performance.now();
    const progress = new CompileProgress(progressCallback, this.options.settings.showCompilationProgressBar ? progressBar() : undefined);
    await initBackend(this.options.settings.backend);
    const settings = withEngineOptions(this.options.settings);
    const execution = executionSettings(settings, this.training);
    const { factors } = execution;
    const { split, micro, examples } = microBatchExamples(inputs, structures, factors);
    const flat = isLayersModel(this.model) ? undefined : flatModel(this.model, structures, this.training, this.loss);
    const tracedModel = flat?.fn ?? this.model;
    // The optimizer is known once the model is traced (a training executor without one builds it from the trace).
    const memoryCheck = (): HostMemoryCheckRequest => ({
      model: settings.modelName ?? modelName(this.model),
      training: this.training,
      examples,
      settings,
      factors,
      trainedWeights: this.optimizer ? new Set(this.optimizer.parameterNames) : undefined,
      optimizerSlots: this.optimizer?.stateSlots().length ?? 0,
      inputBytes: inputs.reduce((n, x) => n + x.size * bytesPerElement(x.dtype), 0),
    });
    let traced: TracedModel;
    try {
      traced = await traceWithinHostMemory(this.traceRequest(tracedModel, examples), memoryCheck());
    } finally {
      if (split) tf.dispose(examples);
    }
    progress.step();
    this.ensureOptimizer(traced);
    const parameters = parameterSpecs(traced.variables);
    const { executable: compiledExecutable, source } = await compileWithCache(
      {
        kind: this.training ? 'training' : 'inference',
        modelName: settings.modelName ?? modelName(this.model),
        graph: traced.graph,
        inputSignature: examples.map((x) => ({ shape: [...x.shape], dtype: x.dtype })),
        microBatchSize: micro,
        execution: optimizerReduction(this.optimizer, execution),
        settings,
        optimizer: this.optimizer,
        replicaGroupings: this.replicaGroupings,
        float16: float16Declarations(traced, inputs, settings.precision.runningStatisticsAlwaysFloat),
        weightNames: traced.weightNames,
      },
      progress,
      this.options,
      parameters,
    );
    const executable = flat ? { ...compiledExecutable, ioStructure: ioStructure(structures, flat) } : compiledExecutable;
    this.hostMemoryEstimate = checkStepHostMemory(executable.graph, traced.variables, memoryCheck());
    const compiled = this.install(executable, traced.variables, {
      parameters,
      graph: traced.graph,
      inputCount: tracedInputCount(tracedModel, this.training, this.loss, executable.inputSignature.length),
    });
    this.compilations++;
    this.compileSeconds = (performance.now() - started) / 1000;
    progress.step();
    writeCompileProfileReports(settings, executable);
    logCompiled(executable, source, traced.variables.size, micro, started);
    return compiled;
  }

  /** What tracing `model` (the wrapped model, or a function model taking flat tensors) on `examples` (one micro-batch) takes of this executor. */
  private traceRequest(model: WrappableModel, examples: readonly tf.Tensor[]): Omit<ExecutorTraceRequest, 'afterKernel'> {
    return { wrapped: this.model, model, training: this.training, loss: this.loss, examples, replicaGroupings: this.replicaGroupings };
  }

  /**
   * A training executor without an optimizer builds one over the traced
   * model's trainable weights: the given tfjs optimizer's equivalent, else
   * the one its layers model was compiled with, else `SGD(lr 0.01)`.
   */
  private ensureOptimizer(traced: TracedModel): void {
    if (this.training && !this.optimizer) this.optimizer = buildOptimizer(this.model, this.optimizerBuilder, traced, unknownAttributeCheck(this.options.settings));
  }

  /**
   * Loads a compiled executable on the device with the weights of
   * `variables`, and makes it this executor's (named as `opts.modelName`
   * says, a run-time option, when it is set).
   */
  private install(executable: Executable, variables: ReadonlyMap<string, tf.Variable>, trace: ModelTraceRecord): Compiled {
    const installed = installExecutable({ executable, variables, trace, settings: this.options.settings, training: this.training, optimizer: this.optimizer });
    this.instances = new ExecutorInstances(installed.instances);
    this.compiledOptimizer = installed.compiledOptimizer;
    this.weights.loadedCurrent();
    this.compiled = installed.compiled;
    return this.compiled;
  }

  /** What an export or checkpoint of the compiled state reads. */
  private exportSource(compiled: Compiled): ExportSource {
    return {
      model: this.model,
      executable: compiled.executable,
      trace: compiled.trace,
      options: this.options,
      optimizer: this.optimizer,
      engine: compiled.engine,
      variables: compiled.variables,
    };
  }

  /**
   * Compiles the model for inputs like `inputs` (as {@link PoplarExecutor.compile}
   * takes them; an offline IPU target is enough, no device is needed) and
   * writes the executable to `path`. With `exportModel` (the default) the
   * file also holds the model (its traced forward pass and weights) and the
   * device state, so `load(path)` restores a ready-to-run executor from the
   * file alone; with `{ exportModel: false }` only the executable is written:
   * wrap the model again and call {@link PoplarExecutor.loadExecutable}.
   * The file is written atomically; missing folders above it are created, and
   * when `path` is an existing directory the file is `model.poptfjs` inside
   * it (with a warning), as PopTorch writes `model.poptorch`.
   */
  async compileAndExport(path: string, ...args: Array<NestedTensors | CompileAndExportOptions>): Promise<void> {
    const { inputs, options } = splitExportArguments(args);
    const compiled = await this.ensureCompiled(inputs);
    checkCallInputs(compiled.executable, compiledArguments(inputs, compiled.executable));
    if (this.instances.skipsWriting(`compileAndExport(${path})`)) return;
    const exportModel = options.exportModel ?? true;
    if (exportModel) syncHostWeights(this.model);
    const file = exportFilePath(path);
    writeExecutableFile(file, executableFileContents(this.exportSource(compiled), exportModel));
    log.info(`exported the ${compiled.executable.kind} executable of '${compiled.executable.modelName}' to ${file}${exportModel ? ' with its model' : ''}`);
  }

  /**
   * Attaches the executable exported to `path` (by `compileAndExport`, with
   * or without its model) to this freshly wrapped model instead of compiling
   * it: the model is traced on inputs like the file's, and its signature and
   * parameters must match the file's (an error names the first difference).
   * The weights come from the model; only run-time options of this
   * executor's options apply (the others are the file's).
   */
  async loadExecutable(path: string): Promise<void> {
    this.assertUsable('loadExecutable');
    if (this.compiled || this.compiling) {
      throw new PoptfjsError(`loadExecutable(${path}): this executor is already compiled; wrap the model again to load an executable`, { type: 'executor' });
    }
    const file = readExecutableFile(path);
    const { traced, tracedModel, parameters, names } = await matchExecutableFile({
      path,
      file,
      model: this.model,
      training: this.training,
      loss: this.loss,
      replicaGroupings: this.replicaGroupings,
      settings: this.options.settings,
      optionsData: this.options.toJSON(),
    });
    this.ensureOptimizer(traced);
    const executable = renameExecutableParameters(file.executable, (n) => names.get(n) ?? n);
    this.install(executable, traced.variables, {
      parameters,
      graph: traced.graph,
      inputCount: tracedInputCount(tracedModel, this.training, this.loss, executable.inputSignature.length),
    });
    log.info(`loaded the ${executable.kind} executable of '${executable.modelName}' from ${path}`);
  }

  /**
   * @internal Used by `load()`: attaches the executable of `file` to the
   * model rebuilt from it, whose variables are given by the file's parameter
   * names, and restores the exported device state.
   */
  attachExportedExecutable(file: ExecutableFileContents, path: string, variables: ReadonlyMap<string, tf.Variable>): void {
    const rename = (n: string) => variables.get(n)?.name ?? n;
    const executable = renameExecutableParameters(file.executable, rename);
    const renamed = new Map([...variables.values()].map((v) => [v.name, v]));
    const parameters = file.parameters.map((p) => ({ ...p, name: rename(p.name) }));
    const exported = file.model!;
    const compiled = this.install(executable, renamed, { parameters, graph: renameGraphParameters(exported.forwardGraph, rename), inputCount: exported.inputCount });
    if (file.deviceState) compiled.engine.importState(mapDeviceState(file.deviceState, tensorFromData, rename));
    log.info(`loaded the ${executable.kind} executable of '${executable.modelName}' and its model from ${path}`);
  }

  /**
   * Writes a checkpoint of the device state to `path`, atomically: every
   * replica's weights, the optimizer state, the loss scale, the random
   * generator and the iteration count. Resuming from it with
   * {@link PoplarExecutor.loadCheckpoint} reproduces the uninterrupted run.
   */
  saveCheckpoint(path: string): void {
    const compiled = this.requireCompiled('saveCheckpoint');
    const recovery = this.binding?.device.pendingRecovery;
    if (recovery !== undefined) {
      throw new PoptfjsError(
        `saveCheckpoint(${path}): the device lost its state in a fault; recover (${recovery}) with detachFromDevice() and attachToDevice(), or load the last checkpoint`,
        {
          type: 'device',
        },
      );
    }
    if (this.instances.skipsWriting(`saveCheckpoint(${path})`)) return;
    writeCheckpointFile(path, checkpointContents(this.exportSource(compiled)));
    log.info(`saved a checkpoint of '${compiled.executable.modelName}' to ${path}`);
  }

  /**
   * Restores the device state saved by {@link PoplarExecutor.saveCheckpoint}
   * to `path` (compiling the model first, for inputs like the checkpoint's,
   * if needed), after checking it was saved from this model (an error names
   * the first difference). The weights are also written to the host model.
   */
  async loadCheckpoint(path: string): Promise<void> {
    this.assertUsable('loadCheckpoint');
    const checkpoint = readCheckpointFile(path);
    let compiled = this.compiled;
    if (!compiled) {
      const inputs = checkpointCompileInputs(path, checkpoint, this.model);
      try {
        compiled = await this.ensureCompiled(inputs);
      } finally {
        tf.dispose(inputs);
      }
    }
    restoreCheckpoint(path, checkpoint, compiled, this.optimizer);
    this.weights.forgetOtherNewest();
    this.copyWeightsToHost();
    log.info(`restored '${compiled.executable.modelName}' from the checkpoint ${path} (after ${checkpoint.deviceState.iterations} device iterations)`);
  }

  /**
   * Saves the host model (with the newest weights, copied from the device
   * first) through a tfjs IO handler, in tfjs's own format: `file://dir`
   * writes `dir/model.json` and its weights (without `@tensorflow/tfjs-node`),
   * or any URL or handler `model.save` accepts. `tf.loadLayersModel` loads
   * it back. Only a tf.LayersModel can be saved.
   */
  async saveModel(url: string | tf.io.IOHandler): Promise<tf.io.SaveResult> {
    this.assertUsable('saveModel');
    if (!isLayersModel(this.model)) {
      throw new PoptfjsError('saveModel: the wrapped model is a function, which tfjs cannot save; save its executable with compileAndExport(path, ...inputs)', {
        type: 'executor',
      });
    }
    syncHostWeights(this.model);
    return this.model.save(url);
  }

  /**
   * Runs the model on a host batch: compiles on the first call, then runs
   * `deviceIterations × replicas × gradientAccumulation` micro-batches on the
   * device. Inference returns the outputs; training returns `[output, loss]`.
   */
  async run(...inputs: NestedTensors[]): Promise<NestedTensors | [NestedTensors, tf.Tensor]> {
    const settings = this.options.settings;
    return withLogFile(executorLogFile(settings), () => this.runLogged(inputs, settings));
  }

  private async runLogged(args: NestedTensors[], settings: OptionsSettings): Promise<NestedTensors | [NestedTensors, tf.Tensor]> {
    const compiled = await this.ensureCompiled(args);
    const inputs = compiledArguments(args, compiled.executable);
    checkCallInputs(compiled.executable, inputs);
    const binding = this.binding!;
    if (binding.needsAttach(settings.connectionType)) this.attachToDevice();
    binding.readyToRun(settings.connectionType);
    if (!compiled.executable.hardware.memory.fits)
      throw new OutOfMemoryError(compiled.executable.hardware.memory, compiled.executable.microBatchSize, compiled.executable.modelName);
    this.weights.sync(compiled);
    await this.instances.beforeStep(compiled.engine, this.training);
    let result: ReturnType<Engine['runStep']>;
    try {
      result = compiled.engine.runStep(inputs);
    } catch (error) {
      this.instances.stepFailed(error, binding.device);
      throw error;
    }
    this.anchored.replace(result.anchors);
    this.calls++;
    if (this.training) this.weights.trained(compiled.variables);
    const output = callOutput(compiled.executable, result.outputs);
    return this.training ? [output, result.loss!] : output;
  }

  /** Writes the device weights (and buffers) into the host model's variables. */
  copyWeightsToHost(): void {
    const compiled = this.requireCompiled('copyWeightsToHost');
    const recovery = this.binding?.device.pendingRecovery;
    if (recovery !== undefined) {
      throw new PoptfjsError(`copyWeightsToHost: the device lost its weights in a fault; recover (${recovery}) with detachFromDevice() and attachToDevice()`, {
        type: 'device',
      });
    }
    this.weights.copyToHost(compiled);
  }

  /**
   * Copies the device weights to the host model if a training step ran since
   * they were last copied (true if it copied), as PopTorch's
   * `copyWeightsToHostIfNeeded`. poptfjs calls it when the host model's
   * weights are read, so they always show the trained values. If a fault lost
   * the device's weights, the host model keeps those last copied, with a
   * warning.
   */
  copyWeightsToHostIfNeeded(): boolean {
    if (!hostWeightsStale(this)) return false;
    const recovery = this.binding?.device.pendingRecovery;
    if (recovery !== undefined) {
      markHostWeightsCurrent(this);
      log.warn(
        `the device of '${this.compiled?.executable.modelName ?? modelName(this.model)}' lost its weights in a fault (recover with ${recovery}); the host model keeps the weights last copied from it`,
      );
      return false;
    }
    this.copyWeightsToHost();
    return true;
  }

  /**
   * Copies the host model's weights to the device (needed after changing them
   * outside poptfjs). They count as a new host version: every other executor
   * of the model loads them before its next run.
   */
  copyWeightsToDevice(): void {
    const compiled = this.requireCompiled('copyWeightsToDevice');
    this.weights.loadNewHostVersion(compiled);
  }

  /**
   * Copies the host values of the buffers named with
   * `Options.updatableNamedBuffers` to the device, without recompiling and
   * without touching any other weight or buffer, as PopTorch's
   * `copyNamedBuffersToDevice`. An error if no buffer was named.
   */
  copyNamedBuffersToDevice(): void {
    const compiled = this.requireCompiled('copyNamedBuffersToDevice');
    const names = this.options.settings.updatableNamedBuffers;
    if (names.length === 0) {
      throw new PoptfjsError('copyNamedBuffersToDevice: no buffers are marked as updatable; name them with Options.updatableNamedBuffers([...])', { type: 'executor' });
    }
    compiled.engine.writeHostWeights(compiled.variables, names);
  }

  /**
   * Uses the current values of `optimizer` (the same optimizer with changed
   * values, or another of the same type over the same parameter groups, or
   * a tfjs optimizer, trained as its poptfjs equivalent) from the next call
   * on, without recompiling (training only). After compilation, only
   * variable attributes may change (see `opt.variableAttrs`); a changed
   * constant attribute is an error naming it.
   */
  setOptimizer(given: Optimizer | tf.Optimizer): void {
    this.assertUsable('setOptimizer');
    const optimizer = this.training ? replacementOptimizer(given, this.optimizer, this.model) : (given as Optimizer);
    checkReplacementOptimizer(this.training, optimizer, unknownAttributeCheck(this.options.settings), this.compiledOptimizer);
    const previous = this.optimizer;
    this.optimizer = optimizer;
    switchOptimizer(this.compiled?.engine, previous, optimizer);
  }

  /** The dtype of each model output (`'float16'` for outputs computed in float16, which hold float16 values in float32 tensors). */
  outputDtypes(): PoptfjsDataType[] {
    const { graph, outputCount } = this.requireCompiled('outputDtypes').executable;
    return graph.roles.outputs.slice(0, outputCount).map((id) => {
      const v = graph.values[id]!;
      return v.precision === 'float16' ? 'float16' : v.dtype;
    });
  }

  /** The loss scale the next training step uses: the optimizer's `lossScaling`, as moved by automatic loss scaling. */
  currentLossScale(): number {
    if (!this.training) throw new PoptfjsError('currentLossScale: an inference model has no loss scale', { type: 'executor' });
    return this.requireCompiled('currentLossScale').engine.lossScale;
  }

  /**
   * The value of the tensor anchored as `shortName` with
   * `Options.anchorTensor` at the last call, combined over the call's
   * micro-batches as its output mode says (the caller owns the returned
   * tensor). An error before the first call or for a name not anchored.
   */
  getAnchoredTensor(shortName: string): tf.Tensor {
    const { executable } = this.requireCompiled('getAnchoredTensor');
    return this.anchored.get(shortName, executable);
  }

  /** The compiled graph as text. */
  irText(): string {
    return irText(this.requireCompiled('irText').executable.graph);
  }

  /**
   * Copies the trained weights to the host model (as PopTorch does), frees
   * the device state and releases the model; the executor cannot be used
   * afterwards.
   */
  destroy(): void {
    if (this.destroyed) return;
    this.copyWeightsToHostIfNeeded();
    this.binding?.device.detach();
    if (this.compiled) this.optimizer?.detachStateStore(this.compiled.engine);
    this.compiled?.engine.destroy();
    this.anchored.dispose();
    this.compiled = undefined;
    this.destroyed = true;
    releaseExecutor(this.model, this);
  }
}

/** A {@link PoplarExecutor} is callable like the model it wraps. */
export interface PoplarExecutor {
  (...inputs: NestedTensors[]): Promise<NestedTensors | [NestedTensors, tf.Tensor]>;
}
