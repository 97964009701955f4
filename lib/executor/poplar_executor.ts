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
import type * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../common/errors.js';
import type { Device } from '../device/device.js';
import type { Options } from '../options/options.js';
import type { Executable } from '../executable/executable.js';
import { modelName, type WrappableModel } from '../trace/model_function.js';
import type { Optimizer } from '../../optim/optimizer.js';
import type { PoptfjsDataType } from '../precision/half.js';
import type { HostMemoryEstimate } from '../host_memory/host_memory_estimate.js';
import { CallableInstance } from './callable_instance.js';
import { moduleRepr } from '../trace/module_repr.js';
import { COMPILE_OPTION_KEYS, type CompileOptions } from '../compile/compile_progress.js';
import type { Engine } from '../engine/engine.js';
import { claimTraining, type WeightHolder } from './model_registry.js';
import { hostVariable } from './host_variable.js';
import { ParameterHandle } from './parameter_handle.js';
import type { ExecutableFileContents } from '../files/executable_file.js';
import type { NestedTensors } from '../trace/nested_values.js';
import type { CompileAndExportOptions } from './executable_export.js';
import { splitTrailingOptions } from './nested_arguments.js';
import { ExecutorState, type ExecutorConfig } from './executor_state.js';
import { attachToDevice, destroyExecutor, detachFromDevice, ensureCompiled } from './executor_lifecycle.js';
import { runExecutor, setExecutorOptimizer } from './executor_run.js';
import { copyNamedBuffersToDevice, copyWeightsToDevice, copyWeightsToHost, copyWeightsToHostIfNeeded } from './executor_weight_sync.js';
import { attachExportedExecutable, compileAndExport, loadCheckpoint, loadExecutable, saveCheckpoint, saveModel } from './executor_files.js';
import {
  compilationTime,
  computeLatency,
  cycleCount,
  executorIrText,
  executorPlanText,
  executorSummaryReport,
  compiledTensorNames,
  firedPatterns,
  measuredOverlap,
  outputDtypes,
} from './executor_reports.js';

export type { ExecutorConfig } from './executor_state.js';

/**
 * What an executor returns: one tensor, or a list when the model returns
 * several. A function model returning arrays and plain objects of tensors
 * gets its output in that structure (`NestedTensors`, typed by the
 * executor's type parameter).
 */
export type ModelOutput = tf.Tensor | tf.Tensor[];

/** What a training executor returns: the model's output and the loss. */
export type TrainingOutput = [ModelOutput, tf.Tensor];

/**
 * A model wrapped for the simulated IPU. Call it like the model: `await executor(x, target)`.
 *
 * The class is a façade: its state is an {@link ExecutorState}, and its
 * lifecycle (executor_lifecycle.ts), run (executor_run.ts), weight sync
 * (executor_weight_sync.ts), files (executor_files.ts) and reports
 * (executor_reports.ts) each live in a file of their own.
 */
export class PoplarExecutor extends CallableInstance implements WeightHolder {
  /** The wrapped model (a tf.LayersModel or a function). */
  readonly model: WrappableModel;
  /** The options, frozen when the model was wrapped. */
  readonly options: Options;
  /** True for a `trainingModel`, false for an `inferenceModel`. */
  readonly training: boolean;
  private readonly executorState: ExecutorState;

  /** @internal Use `trainingModel` or `inferenceModel`. */
  constructor(config: ExecutorConfig) {
    super();
    this.model = config.model;
    this.options = config.options;
    this.training = config.training;
    this.executorState = new ExecutorState(config, this);
    if (!config.options.isFrozen()) config.options.freeze();
    if (this.training) claimTraining(this.model, modelName(this.model), this);
  }

  /**
   * The wrapped model, whose properties and methods the executor shows where
   * it has none of that name (`executor.layers`, `executor.getLayer('fc')`),
   * as PopTorch's wrapper forwards attribute access to the module. Weights
   * read this way are the device's after training, as any host read of them.
   */
  protected override forwardedTo(): object {
    return this.model;
  }

  /** The wrapped model with its block annotations, as PopTorch's `repr` of a wrapped model (`moduleRepr`). */
  override toString(): string {
    return moduleRepr(this.model);
  }

  /** True once {@link PoplarExecutor.destroy} was called. */
  get isDestroyed(): boolean {
    return this.executorState.destroyed;
  }

  /** True once the model was compiled (by {@link PoplarExecutor.compile} or the first call). */
  isCompiled(): boolean {
    return this.executorState.compiled !== undefined;
  }

  /** How many times this executor compiled its model. */
  get compileCount(): number {
    return this.executorState.compilations;
  }

  /** The compiled executable (an error before compilation). */
  get executable(): Executable {
    return this.executorState.requireCompiled('executable').executable;
  }

  /** The engine the compiled model runs on (an error before compilation): its programs, streams, profile and simulated errors at the Poplar level. */
  get engine(): Engine {
    return this.executorState.requireCompiled('engine').engine;
  }

  /**
   * A weight of the model by its tf.Variable name, to set per-parameter
   * options such as `replicaGrouping` before compiling.
   */
  parameter(name: string): ParameterHandle {
    const state = this.executorState;
    state.assertUsable('parameter');
    hostVariable(this.model, name);
    return new ParameterHandle(name, (grouping) => {
      if (state.compiled) {
        throw new PoptfjsError(`parameter('${name}').replicaGrouping: set replica groupings before the model is compiled`, { type: 'replication' });
      }
      state.replicaGroupings[name] = grouping;
    });
  }

  /** The execution plan as text: stages, IPUs and the schedule table. */
  planText(): string {
    return executorPlanText(this.executorState);
  }

  /** How often each IR pattern fired when the model was compiled, by pattern name. */
  patterns(): Readonly<Record<string, number>> {
    return firedPatterns(this.executorState);
  }

  /** The device the model was compiled for (after compiling). */
  get device(): Device {
    this.executorState.requireCompiled('device');
    return this.executorState.binding!.device;
  }

  /** True while the executor is attached to its device. */
  isAttachedToDevice(): boolean {
    return this.executorState.binding?.device.isAttached ?? false;
  }

  /**
   * Detaches from the device so other processes can use its IPUs. A training
   * executor first copies its weights to the host (unless a fault lost them).
   * The next call attaches again, as {@link PoplarExecutor.attachToDevice} does.
   */
  detachFromDevice(): void {
    detachFromDevice(this.executorState);
  }

  /**
   * Attaches to the device again and loads the model: the weights come from
   * the host; after a fault, the optimizer state starts afresh, as after
   * compiling (restore it from a checkpoint if needed).
   */
  attachToDevice(): void {
    attachToDevice(this.executorState);
  }

  /** Simulated cycles of one call on the target IPUs (a call must have run). */
  cycleCount(): number {
    return cycleCount(this.executorState);
  }

  /** Simulated latency of a call in seconds: `{ min, max, mean }` over the calls so far. */
  getComputeLatency(): { min: number; max: number; mean: number } {
    return computeLatency(this.executorState);
  }

  /** Seconds the compilation took (wall clock). */
  compilationTime(): number {
    return compilationTime(this.executorState);
  }

  /**
   * The summary report: memory per IPU, placement and schedule, and, when
   * profiling is enabled (`Options.enableProfiling` or
   * `POPTFJS_ENGINE_OPTIONS`), the simulated execution.
   */
  getSummaryReport(): string {
    return executorSummaryReport(this.executorState);
  }

  /**
   * With `opts.parallelIpus(true)`, what the worker IPUs measured over the
   * last call: each IPU's busy time, the call's wall time and their overlap
   * (sum of busy time / wall time). Undefined before a call, or when the
   * model runs its IPUs in-process.
   */
  measuredOverlap(): ReturnType<Engine['measuredOverlap']> {
    return measuredOverlap(this.executorState);
  }

  /**
   * The host memory a step was estimated to need when the model was
   * compiled: per heap (the main thread's, each worker IPU's) and kind.
   * Undefined before compiling and for an executable loaded from a file.
   */
  hostMemory(): HostMemoryEstimate | undefined {
    return this.executorState.hostMemoryEstimate;
  }

  /** The optimizer of a training executor. */
  getOptimizer(): Optimizer | undefined {
    return this.executorState.optimizer;
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
    await ensureCompiled(this.executorState, split.inputs, split.options?.progress);
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
    await compileAndExport(this.executorState, path, args);
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
    await loadExecutable(this.executorState, path);
  }

  /**
   * @internal Used by `load()`: attaches the executable of `file` to the
   * model rebuilt from it, whose variables are given by the file's parameter
   * names, and restores the exported device state.
   */
  attachExportedExecutable(file: ExecutableFileContents, path: string, variables: ReadonlyMap<string, tf.Variable>): void {
    attachExportedExecutable(this.executorState, file, path, variables);
  }

  /**
   * Writes a checkpoint of the device state to `path`, atomically: every
   * replica's weights, the optimizer state, the loss scale, the random
   * generator and the iteration count. Resuming from it with
   * {@link PoplarExecutor.loadCheckpoint} reproduces the uninterrupted run.
   */
  saveCheckpoint(path: string): void {
    saveCheckpoint(this.executorState, path);
  }

  /**
   * Restores the device state saved by {@link PoplarExecutor.saveCheckpoint}
   * to `path` (compiling the model first, for inputs like the checkpoint's,
   * if needed), after checking it was saved from this model (an error names
   * the first difference). The weights are also written to the host model.
   */
  async loadCheckpoint(path: string): Promise<void> {
    await loadCheckpoint(this.executorState, path);
  }

  /**
   * Saves the host model (with the newest weights, copied from the device
   * first) through a tfjs IO handler, in tfjs's own format: `file://dir`
   * writes `dir/model.json` and its weights (without `@tensorflow/tfjs-node`),
   * or any URL or handler `model.save` accepts. `tf.loadLayersModel` loads
   * it back. Only a tf.LayersModel can be saved.
   */
  async saveModel(url: string | tf.io.IOHandler): Promise<tf.io.SaveResult> {
    return saveModel(this.executorState, url);
  }

  /**
   * Runs the model on a host batch: compiles on the first call, then runs
   * `deviceIterations × replicas × gradientAccumulation` micro-batches on the
   * device. Inference returns the outputs; training returns `[output, loss]`.
   */
  async run(...inputs: NestedTensors[]): Promise<NestedTensors | [NestedTensors, tf.Tensor]> {
    return runExecutor(this.executorState, inputs);
  }

  /** Writes the device weights (and buffers) into the host model's variables. */
  copyWeightsToHost(): void {
    copyWeightsToHost(this.executorState);
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
    return copyWeightsToHostIfNeeded(this.executorState);
  }

  /**
   * Copies the host model's weights to the device (needed after changing them
   * outside poptfjs). They count as a new host version: every other executor
   * of the model loads them before its next run.
   */
  copyWeightsToDevice(): void {
    copyWeightsToDevice(this.executorState);
  }

  /**
   * Copies the host values of the buffers named with
   * `Options.updatableNamedBuffers` to the device, without recompiling and
   * without touching any other weight or buffer, as PopTorch's
   * `copyNamedBuffersToDevice`. An error if no buffer was named.
   */
  copyNamedBuffersToDevice(): void {
    copyNamedBuffersToDevice(this.executorState);
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
    setExecutorOptimizer(this.executorState, given);
  }

  /** The dtype of each model output (`'float16'` for outputs computed in float16, which hold float16 values in float32 tensors). */
  outputDtypes(): PoptfjsDataType[] {
    return outputDtypes(this.executorState);
  }

  /** The loss scale the next training step uses: the optimizer's `lossScaling`, as moved by automatic loss scaling. */
  currentLossScale(): number {
    if (!this.training) throw new PoptfjsError('currentLossScale: an inference model has no loss scale', { type: 'executor' });
    return this.executorState.requireCompiled('currentLossScale').engine.lossScale;
  }

  /**
   * The value of the tensor anchored as `shortName` with
   * `Options.anchorTensor` at the last call, combined over the call's
   * micro-batches as its output mode says (the caller owns the returned
   * tensor). An error before the first call or for a name not anchored.
   */
  getAnchoredTensor(shortName: string): tf.Tensor {
    const { executable } = this.executorState.requireCompiled('getAnchoredTensor');
    return this.executorState.anchored.get(shortName, executable);
  }

  /**
   * The names of the tensors of the compiled graph that `Options.anchorTensor`
   * takes (inputs and weights by name, `loss`, layers' outputs, gradients,
   * every value), as PopTorch's `getTensorNames()`; the model must be compiled.
   */
  getTensorNames(): string[] {
    return compiledTensorNames(this.executorState);
  }

  /** The compiled graph as text. */
  irText(): string {
    return executorIrText(this.executorState);
  }

  /**
   * Copies the trained weights to the host model (as PopTorch does), frees
   * the device state and releases the model; the executor cannot be used
   * afterwards.
   */
  destroy(): void {
    destroyExecutor(this.executorState);
  }
}

/** A {@link PoplarExecutor} is callable like the model it wraps. */
export interface PoplarExecutor {
  (...inputs: NestedTensors[]): Promise<NestedTensors | [NestedTensors, tf.Tensor]>;
}
