/**
 * `PoplarExecutor`: a tfjs model wrapped for the simulated IPU, returned by
 * `trainingModel` and `inferenceModel`.
 *
 * The first call compiles: the model is traced on one micro-batch into the IR
 * and loaded on the device with a copy of the host weights. Every call then
 * splits the host batch into micro-batches and runs them on the device; the
 * weights stay there until `copyWeightsToHost()`.
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../errors.js';
import { getLogger } from '../log.js';
import { initBackend } from '../backend/backend_selection.js';
import { engine } from '../backend/tfjs_internals.js';
import { irText } from '../ir/ir_text.js';
import type { Device } from '../ipu/device.js';
import { OutOfMemoryError } from '../ipu/out_of_memory_error.js';
import type { Options } from '../options/options.js';
import { profileDirectory, writeProfileReports } from '../report/profile_report.js';
import { summaryReport } from '../report/summary_report.js';
import { batchFormula, hostBatchSize, microBatchesPerCall, microBatchSize } from '../runtime/batch_plan.js';
import type { Executable, TensorSignature } from '../runtime/executable.js';
import { LoadedExecutable } from '../runtime/loaded_executable.js';
import type { ReplicaGrouping } from '../runtime/replica_grouping.js';
import { planText } from '../strategy/plan_text.js';
import type { LossSpec } from '../trace/loss_function.js';
import { isLayersModel, modelName, type WrappableModel } from '../trace/model_function.js';
import { traceInference, traceTraining, type TracedModel } from '../trace/trace_model.js';
import { Optimizer } from '../../optim/optimizer.js';
import { SGD } from '../../optim/sgd.js';
import { CallableInstance } from './callable_instance.js';
import { CompileProgress, progressBar, type CompileOptions, type ProgressCallback } from './compile_progress.js';
import { DeviceBinding } from './device_binding.js';
import { compileGraph, executionSettings } from './graph_compiler.js';
import { claimTraining, releaseExecutor, wrappedModelState, type WeightHolder } from './model_registry.js';
import { ParameterHandle } from './parameter_handle.js';

const log = getLogger('poptfjs');

/** What an executor returns: one tensor, or a list when the model returns several. */
export type ModelOutput = tf.Tensor | tf.Tensor[];

/** What a training executor returns: the model's output and the loss. */
export type TrainingOutput = [ModelOutput, tf.Tensor];

/** Compiled state of an executor. */
interface Compiled {
  readonly executable: Executable;
  readonly loaded: LoadedExecutable;
  readonly variables: ReadonlyMap<string, tf.Variable>;
}

/** The settings an executor is created with. */
export interface ExecutorConfig {
  readonly model: WrappableModel;
  readonly options: Options;
  readonly training: boolean;
  readonly optimizer?: Optimizer | undefined;
  readonly loss?: LossSpec | undefined;
}

function describeSignature(sig: readonly TensorSignature[]): string {
  return sig.map((s, i) => `input ${i}: ${s.dtype}[${s.shape.join(',')}]`).join(', ');
}

function checkTensorInputs(inputs: readonly unknown[]): asserts inputs is tf.Tensor[] {
  inputs.forEach((x, i) => {
    if (!(x instanceof tf.Tensor)) {
      const got = x === null ? 'null' : Array.isArray(x) ? 'an array' : ArrayBuffer.isView(x) ? 'a typed array' : typeof x;
      throw new PoptfjsError(`input ${i} is ${got}; expected a tf.Tensor`, { type: 'input' });
    }
    if (x.isDisposed) throw new PoptfjsError(`input ${i} is a disposed tensor`, { type: 'input' });
  });
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
  private readonly loss: LossSpec | undefined;
  private compiled: Compiled | undefined;
  private compiling: Promise<Compiled> | undefined;
  private destroyed = false;
  private loadedHostVersion = -1;
  private compilations = 0;
  private binding: DeviceBinding | undefined;
  private compileSeconds = 0;
  private calls = 0;
  private readonly replicaGroupings: Record<string, ReplicaGrouping> = {};
  /** What {@link PoplarExecutor.attachToDevice} must reload: the weights, and after a fault the optimizer state too. */
  private reloadOnAttach: 'weights' | 'after-fault' | undefined;

  /** @internal Use `trainingModel` or `inferenceModel`. */
  constructor(config: ExecutorConfig) {
    super();
    this.model = config.model;
    this.options = config.options;
    this.training = config.training;
    this.optimizer = config.optimizer;
    this.loss = config.loss;
    if (!config.options.isFrozen()) config.options.freeze();
    if (this.training) claimTraining(this.model, modelName(this.model), this);
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

  /**
   * A weight of the model by its tf.Variable name, to set per-parameter
   * options such as `replicaGrouping` before compiling.
   */
  parameter(name: string): ParameterHandle {
    this.assertUsable('parameter');
    this.hostVariable(name);
    return new ParameterHandle(name, (grouping) => {
      if (this.compiled) {
        throw new PoptfjsError(`parameter('${name}').replicaGrouping: set replica groupings before the model is compiled`, { type: 'replication' });
      }
      this.replicaGroupings[name] = grouping;
    });
  }

  /** The host tf.Variable called `name` (a weight of the model); an error listing the names otherwise. */
  private hostVariable(name: string): tf.Variable {
    const candidates: tf.Variable[] = isLayersModel(this.model)
      ? this.model.weights.map((w) => (w as unknown as { val: tf.Variable }).val)
      : Object.values(engine().state.registeredVariables);
    const found = candidates.find((v) => v.name === name);
    if (!found) {
      throw new PoptfjsError(
        `the model has no weight called '${name}'${isLayersModel(this.model) ? `; its weights are ${candidates.map((v) => `'${v.name}'`).join(', ')}` : ''}`,
        { type: 'executor' },
      );
    }
    return found;
  }

  /** One replica's slice of each weight split across replica groups, to trace with. */
  private groupedSlices(): Map<tf.Variable, tf.Tensor> {
    const slices = new Map<tf.Variable, tf.Tensor>();
    for (const name of Object.keys(this.replicaGroupings)) {
      const variable = this.hostVariable(name);
      if (variable.rank === 0) throw new PoptfjsError(`parameter '${name}' is a scalar and cannot be split across replica groups`, { type: 'replication' });
      slices.set(variable, tf.tidy(() => tf.squeeze(tf.slice(variable, [0], [1]), [0])));
    }
    return slices;
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
   */
  detachFromDevice(): void {
    this.requireCompiled('detachFromDevice');
    const device = this.binding!.device;
    if (!device.isAttached) throw new PoptfjsError('detachFromDevice: the device is not attached', { type: 'device' });
    if (this.training && device.pendingRecovery === undefined) this.copyWeightsToHost();
    device.detach();
    this.reloadOnAttach = device.pendingRecovery !== undefined ? 'after-fault' : 'weights';
  }

  /**
   * Attaches to the device again and loads the model: the weights come from
   * the host; after a fault, the optimizer state starts afresh (restore it
   * from a checkpoint if needed).
   */
  attachToDevice(): void {
    const compiled = this.requireCompiled('attachToDevice');
    const device = this.binding!.device;
    if (device.isAttached) throw new PoptfjsError('attachToDevice: the device is already attached', { type: 'device' });
    device.attach();
    if (this.reloadOnAttach === 'after-fault') compiled.loaded.discardOptimizerState();
    if (this.reloadOnAttach !== undefined) this.loadWeights(compiled);
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
    const { executable } = this.requireCompiled('getSummaryReport');
    return summaryReport(executable, profileDirectory(this.options.settings.profileDir) !== undefined);
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
   * would take). Nothing is run on the device. Compiling again is a no-op.
   */
  async compile(...inputs: Array<tf.Tensor | CompileOptions>): Promise<void> {
    const last = inputs[inputs.length - 1];
    const options = last !== undefined && !(last instanceof tf.Tensor) && typeof last === 'object' && !Array.isArray(last) ? (last as CompileOptions) : undefined;
    await this.ensureCompiled(options ? inputs.slice(0, -1) : inputs, options?.progress);
  }

  private async ensureCompiled(inputs: readonly unknown[], progressCallback?: ProgressCallback): Promise<Compiled> {
    this.assertUsable('compile');
    checkTensorInputs(inputs);
    if (this.compiled) return this.compiled;
    this.compiling ??= this.compileNow(inputs, progressCallback).finally(() => (this.compiling = undefined));
    return this.compiling;
  }

  private async compileNow(inputs: readonly tf.Tensor[], progressCallback?: ProgressCallback): Promise<Compiled> {
    const started = performance.now();
    const progress = new CompileProgress(progressCallback, this.options.settings.showCompilationProgressBar ? progressBar() : undefined);
    await initBackend(this.options.settings.backend);
    const settings = this.options.settings;
    const execution = executionSettings(settings, this.training);
    const { factors } = execution;
    if (inputs.length === 0 && microBatchesPerCall(factors) > 1) {
      throw new PoptfjsError(`a model without inputs cannot be split into ${batchFormula(factors)} micro-batches`, { type: 'batching' });
    }
    const split = microBatchesPerCall(factors) > 1;
    const hostBatch = inputs[0]?.shape[0] ?? 1;
    if (split) {
      inputs.forEach((x, i) => {
        if (x.rank === 0 || x.shape[0] !== hostBatch) {
          throw new PoptfjsError(
            `input ${i} has shape [${x.shape.join(',')}] but input 0 has a batch dimension of ${hostBatch}; every input needs the same first (batch) dimension`,
            { type: 'input' },
          );
        }
      });
    }
    const micro = split ? microBatchSize(factors, hostBatch) : hostBatch;
    const examples = split ? inputs.map((x) => tf.slice(x, [0], [micro])) : [...inputs];
    const replacements = this.groupedSlices();
    let traced: TracedModel;
    try {
      const options = { replacements };
      traced = this.training ? traceTraining(this.model, this.loss, examples, options) : traceInference(this.model, examples, options);
    } finally {
      if (split) tf.dispose(examples);
      tf.dispose([...replacements.values()]);
    }
    progress.step();
    if (this.training && !this.optimizer) {
      const trainable = [...traced.variables.values()].filter((v) => v.trainable);
      this.optimizer = new SGD(isLayersModel(this.model) ? this.model : trainable, { lr: 0.01 });
    }
    const executable = compileGraph({
      kind: this.training ? 'training' : 'inference',
      modelName: modelName(this.model),
      graph: traced.graph,
      inputSignature: examples.map((x) => ({ shape: [...x.shape], dtype: x.dtype })),
      microBatchSize: micro,
      execution,
      settings,
      optimizer: this.optimizer,
      replicaGroupings: this.replicaGroupings,
      progress,
    });
    const { graph, inputSignature } = executable;
    const binding = DeviceBinding.acquire(executable, settings);
    const loaded = new LoadedExecutable(executable, this.optimizer, this.options.settings.randomSeed);
    try {
      loaded.loadWeights(traced.variables);
    } catch (error) {
      loaded.dispose();
      binding.device.detach();
      throw error;
    }
    this.loadedHostVersion = wrappedModelState(this.model).hostVersion;
    this.compiled = { executable, loaded, variables: traced.variables };
    this.binding = binding;
    this.compilations++;
    this.compileSeconds = (performance.now() - started) / 1000;
    progress.step();
    const reports = profileDirectory(settings.profileDir);
    if (reports !== undefined) {
      const written = writeProfileReports(reports, executable);
      log.info(`profile reports written to ${written.json} and ${written.html}`);
    }
    log.info(
      () =>
        `compiled '${executable.modelName}' for ${executable.kind}: ${graph.nodes.length} nodes, ` +
        `${traced.variables.size} parameters, micro-batch ${micro}, ${describeSignature(inputSignature)} ` +
        `(${(performance.now() - started).toFixed(1)} ms)`,
    );
    return this.compiled;
  }

  private checkCallInputs(compiled: Compiled, inputs: readonly tf.Tensor[]): void {
    const { inputSignature, factors, microBatchSize: micro } = compiled.executable;
    if (inputs.length !== inputSignature.length) {
      throw new PoptfjsError(
        `expected ${inputSignature.length} input tensor(s) as at compile (${describeSignature(inputSignature)}), got ${inputs.length}`,
        { type: 'input' },
      );
    }
    const split = microBatchesPerCall(factors) > 1;
    inputs.forEach((x, i) => {
      const sig = inputSignature[i]!;
      const expected = split ? [hostBatchSize(factors, micro), ...sig.shape.slice(1)] : [...sig.shape];
      if (x.dtype !== sig.dtype) {
        throw new PoptfjsError(`input ${i} has dtype ${x.dtype}, but the model was compiled for ${sig.dtype}`, { type: 'input' });
      }
      if (x.shape.length !== expected.length || x.shape.some((d, k) => d !== expected[k])) {
        const arithmetic = split ? ` (host batch ${expected[0]} = ${batchFormula(factors, micro)})` : '';
        throw new PoptfjsError(
          `input ${i} has shape [${x.shape.join(',')}], but the model was compiled for [${expected.join(',')}]${arithmetic}`,
          { type: 'input' },
        );
      }
    });
  }

  /** Brings this executor's device weights up to date with the newest copy of the model's weights. */
  private syncWeights(compiled: Compiled): void {
    const state = wrappedModelState(this.model);
    const newest = state.newestOnDevice;
    if (newest && newest !== this && !newest.isDestroyed) newest.copyWeightsToHost();
    if (this.loadedHostVersion < state.hostVersion) this.loadWeights(compiled);
  }

  private loadWeights(compiled: Compiled): void {
    const state = wrappedModelState(this.model);
    compiled.loaded.loadWeights(compiled.variables);
    this.loadedHostVersion = state.hostVersion;
    if (state.newestOnDevice === this) state.newestOnDevice = undefined;
  }

  /**
   * Runs the model on a host batch: compiles on the first call, then runs
   * `deviceIterations × replicas × gradientAccumulation` micro-batches on the
   * device. Inference returns the outputs; training returns `[output, loss]`.
   */
  async run(...inputs: tf.Tensor[]): Promise<ModelOutput | TrainingOutput> {
    const compiled = await this.ensureCompiled(inputs);
    this.checkCallInputs(compiled, inputs);
    const binding = this.binding!;
    binding.readyToRun(this.options.settings.connectionType);
    if (!compiled.executable.hardware.memory.fits) throw new OutOfMemoryError(compiled.executable.hardware.memory, compiled.executable.microBatchSize);
    this.syncWeights(compiled);
    const result = compiled.loaded.run(inputs, binding.observer());
    this.calls++;
    if (this.training) wrappedModelState(this.model).newestOnDevice = this;
    const output = compiled.executable.singleOutput ? result.outputs[0]! : result.outputs;
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
    compiled.loaded.storeWeights(compiled.variables);
    const state = wrappedModelState(this.model);
    state.hostVersion++;
    this.loadedHostVersion = state.hostVersion;
    if (state.newestOnDevice === this) state.newestOnDevice = undefined;
  }

  /** Copies the host model's weights to the device (needed after changing them outside poptfjs). */
  copyWeightsToDevice(): void {
    this.loadWeights(this.requireCompiled('copyWeightsToDevice'));
  }

  /** Replaces the optimizer (training only); its hyper-parameters take effect on the next call. */
  setOptimizer(optimizer: Optimizer): void {
    this.assertUsable('setOptimizer');
    if (!this.training) throw new PoptfjsError('setOptimizer: an inference model has no optimizer', { type: 'executor' });
    if (!(optimizer instanceof Optimizer)) {
      throw new PoptfjsError('setOptimizer: expected a poptfjs optimizer (e.g. new optim.SGD(model, { lr }))', { type: 'executor' });
    }
    this.optimizer = optimizer;
    this.compiled?.loaded.setOptimizer(optimizer);
  }

  /** The compiled graph as text. */
  irText(): string {
    return irText(this.requireCompiled('irText').executable.graph);
  }

  /** Frees the device state and releases the model; the executor cannot be used afterwards. */
  destroy(): void {
    if (this.destroyed) return;
    this.binding?.device.detach();
    this.compiled?.loaded.dispose();
    this.compiled = undefined;
    this.destroyed = true;
    releaseExecutor(this.model, this);
  }
}

/** A {@link PoplarExecutor} is callable like the model it wraps. */
export interface PoplarExecutor {
  (...inputs: tf.Tensor[]): Promise<ModelOutput | TrainingOutput>;
}
