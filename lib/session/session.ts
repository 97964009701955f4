/**
 * `Session`: what `InferenceSession` and `TrainingSession` share, as
 * PopART's session. Creating one imports the ONNX model into the IR (its
 * anchors as outputs, for training its loss and gradients) and places it as
 * the session options say; `prepareDevice()` compiles it on the shared
 * compile path (patterns, placement, schedule, memory and time), binds it to
 * the device and loads the host weights; `run(stepio)` runs one step of
 * `batchesPerStep × accumulationFactor × replicationFactor` micro-batches.
 *
 * Weights live in two places, as in PopART: the host weights (the session's
 * copy, read and written with `readWeights` / `writeWeights`,
 * `resetHostWeights`, `modelToHost`) and the device's, which `weightsFromHost`
 * and `weightsToHost` copy between.
 */
import * as tf from '@tensorflow/tfjs';
import { z } from 'zod';
import { initBackend } from '../backend/backend_selection.js';
import { PopartException, PopartRuntimeError, PoplarSystemRuntimeError } from '../common/errors.js';
import { DeviceBinding } from '../executor/device_binding.js';
import { executableCache } from '../files/executable_cache.js';
import { executableCacheKey } from '../executor/executable_cache_key.js';
import { CompileProgress } from '../executor/compile_progress.js';
import { compileGraph, executionSettings, type GraphCompileRequest } from '../executor/graph_compiler.js';
import { Device } from '../ipu/device.js';
import { OutOfMemoryError } from '../ipu/out_of_memory_error.js';
import { sizeOf, type Graph } from '../ir/graph.js';
import { Patterns } from '../ir/patterns/patterns.js';
import { getLogger } from '../common/log.js';
import { hostTensorToTf } from '../onnx/proto/host_tensor.js';
import { writeModel } from '../onnx/model_export.js';
import { readModel } from '../onnx/model_file.js';
import { importModel, type ImportedModel } from '../onnx/model_import.js';
import { elementTypeName, elementTypeOfDtype, OnnxElementType } from '../onnx/proto/onnx_element_type.js';
import { roundFloat16Array } from '../precision/float16.js';
import { tensorFromProto } from '../onnx/proto/tensor_proto_data.js';
import type { Options } from '../options/options.js';
import { profileDirectory, writeProfileReports } from '../report/profile_report.js';
import type { Executable, TensorSignature } from '../runtime/executable.js';
import { readExecutableFile, writeExecutableFile } from '../files/executable_file.js';
import { LoadedExecutable } from '../runtime/loaded_executable.js';
import { RandomSource } from '../runtime/random_source.js';
import type { Optimizer } from '../../optim/optimizer.js';
import { anchorArrayShape, anchorValues, hostArrayOf, microBatchesPerStep, type StepFactors } from './anchor_arrays.js';
import { DataFlow } from './data_flow.js';
import { engineSettings, type EngineOptionsSource, type EngineSettings } from '../options/engine_options.js';
import { accumulationFactorOf, executionOptions, replicationFactorOf } from './execution_options.js';
import { modelFromSource, type ModelSource } from './model_source.js';
import { sessionExecutableFromFile, executableFileContents, type SessionGraph } from './session_executable_file.js';
import { sessionSettings, type SessionOptions, type SessionSettings } from './session_options.js';
import { sessionReport, sessionSummaryReport, type SessionReport } from './session_report.js';
import { checkBuffer, stepInputs, writeAnchor } from './step_buffers.js';
import { StepIO, type HostArray, type HostArrays } from './step_io.js';
import { virtualGraphPlacement } from './virtual_graph_placement.js';

/** Engine options of a session: PopART's errors for bad ones. */
const SESSION_ENGINE_OPTIONS: EngineOptionsSource = { name: 'SessionOptions.engineOptions', error: (message) => new PopartException(message) };
import { checkedArgument } from './checked_argument.js';

const log = getLogger('session');
const devicexLog = getLogger('devicex');
const irLog = getLogger('ir');
const cesLog = getLogger('ces');

/** Shapes of graph inputs whose shapes the model leaves unknown, by input name (PopART's `InputShapeInfo`). */
export type InputShapeInfo = Readonly<Record<string, readonly number[]>> | ReadonlyMap<string, readonly number[]>;

/** What every session is created with. */
export interface SessionArguments {
  /** The ONNX model: a file path, the bytes of a `ModelProto` (e.g. `builder.getModelProto()`), or a `ModelProto`. */
  readonly model: ModelSource;
  /** The batches per step and the anchors. */
  readonly dataFlow: DataFlow;
  /** The device to run on (from a `DeviceManager`). */
  readonly deviceInfo: Device;
  /** Shapes of inputs the model leaves unknown. */
  readonly inputShapeInfo?: InputShapeInfo;
  /** The graph rewrites to run (default: `new Patterns('Default')`). */
  readonly patterns?: Patterns;
  /** The session options. */
  readonly userOptions?: SessionOptions | Partial<SessionOptions>;
  /** The session's name in reports (default `inference` or `training`). */
  readonly name?: string;
}

/** Weight buffers keyed by weight (initializer) name, for `readWeights` / `writeWeights` (PopART's `WeightsIO`). */
export type WeightsIO = HostArrays;

/** A tensor's shape and the ONNX element type its buffers hold. */
export interface SessionTensorInfo {
  readonly shape: number[];
  /** `FLOAT`, `INT32` or `BOOL`. */
  readonly dataType: string;
}

const argumentsSchema = z.object({
  model: z.unknown(),
  dataFlow: z.instanceof(DataFlow, { message: 'expected a DataFlow, e.g. new DataFlow(1, { output: AnchorReturnType("All") })' }),
  deviceInfo: z.instanceof(Device, { message: 'expected a device from a DeviceManager, e.g. new DeviceManager().createCpuDevice()' }),
  inputShapeInfo: z.union([z.record(z.string(), z.array(z.number().int().nonnegative())), z.map(z.string(), z.array(z.number().int().nonnegative()))]).optional(),
  patterns: z.instanceof(Patterns, { message: "expected Patterns, e.g. new Patterns('Default')" }).optional(),
  userOptions: z.object({}).passthrough().optional(),
  name: z.string().min(1).optional(),
});

/** What a subclass gives the session it creates. */
export interface SessionSetup {
  readonly args: SessionArguments;
  readonly kind: Executable['kind'];
  /** For training: the loss's tensor name. */
  readonly loss?: string;
}

/** What the session holds once compiled and loaded on its device. */
interface LoadedSession {
  readonly binding: DeviceBinding;
  readonly loaded: LoadedExecutable;
}

/** A session: an ONNX model on a device. Use `InferenceSession.create` or `TrainingSession.create`. */
export abstract class Session {
  /** The session's name in reports. */
  readonly name: string;
  /** The batches per step and the anchors. */
  readonly dataFlow: DataFlow;
  /** The device the session runs on. */
  readonly deviceInfo: Device;
  /** The checked session options. */
  protected readonly settings: SessionSettings;
  /** The model in the IR. */
  protected readonly imported: ImportedModel;
  /** The options the session compiles with. */
  protected readonly options: Options;
  private readonly engine: EngineSettings;
  private readonly kind: Executable['kind'];
  private readonly graph: Graph;
  private readonly factors: StepFactors;
  private readonly inputSignature: TensorSignature[];
  private readonly microBatch: number;
  private readonly reportDirectory: string | undefined;
  private readonly executionProfiling: boolean;
  private executable: Executable | undefined;
  private device: LoadedSession | undefined;
  private runs = 0;
  /** True after a device fault, until the weights are loaded again. */
  private weightsLost = false;
  private seed: number | undefined;
  private disposed = false;

  /** @internal Subclasses create sessions from the model {@link Session.importFor} imported. */
  protected constructor(setup: SessionSetup, imported: ImportedModel) {
    const { args } = setup;
    const where = setup.kind === 'training' ? 'TrainingSession' : 'InferenceSession';
    this.kind = setup.kind;
    this.name = args.name ?? setup.kind;
    this.dataFlow = args.dataFlow;
    this.deviceInfo = args.deviceInfo;
    this.imported = imported;
    this.settings = sessionSettings(args.userOptions as SessionOptions | undefined);
    this.engine = engineSettings(this.settings.engineOptions, SESSION_ENGINE_OPTIONS);
    this.reportDirectory = profileDirectory(this.engine.reportDirectory);
    this.executionProfiling = this.engine.executionProfile || (this.engine.reportDirectory === undefined && this.reportDirectory !== undefined);
    const training = setup.kind === 'training';
    this.factors = {
      batchesPerStep: args.dataFlow.batchesPerStep(),
      accumulationFactor: accumulationFactorOf(this.settings, training),
      replicationFactor: replicationFactorOf(this.settings),
    };
    const ipusPerReplica = Math.max(1, Math.floor(args.deviceInfo.numIpus / this.factors.replicationFactor));
    const placed = virtualGraphPlacement(imported.graph, imported.model.proto, this.settings, ipusPerReplica);
    this.graph = placed.graph;
    this.options = executionOptions({
      settings: this.settings,
      engine: this.engine,
      batchesPerStep: this.factors.batchesPerStep,
      training,
      strategy: placed.strategy,
      device: args.deviceInfo,
      patterns: args.patterns,
      modelName: this.name,
      reportDirectory: this.reportDirectory,
    });
    this.inputSignature = imported.inputNames.map((name) => {
      const info = imported.tensorInfo.get(name)!;
      return { shape: [...info.shape], dtype: info.dtype };
    });
    this.microBatch = this.checkInputBatching(where);
    this.checkAnchors(where);
  }

  /** Imports the model of `setup` (after checking the arguments); subclasses construct the session from it. */
  protected static async importFor(setup: SessionSetup, where: string): Promise<ImportedModel> {
    const args = setup.args;
    checkedArgument(argumentsSchema, args, where);
    // The options are checked before the (possibly long) import; the session checks them again when constructed.
    engineSettings(sessionSettings(args.userOptions as SessionOptions | undefined).engineOptions, SESSION_ENGINE_OPTIONS);
    await initBackend();
    const model = modelFromSource(args.model, where);
    const imported = importModel(model, {
      ...(args.inputShapeInfo ? { inputShapeInfo: args.inputShapeInfo } : {}),
      outputs: args.dataFlow.anchors(),
      ...(setup.loss !== undefined ? { training: { loss: setup.loss } } : {}),
    });
    irLog.info(
      () =>
        `imported '${model.proto.graph?.name ?? ''}': ${model.proto.graph!.node.length} ONNX nodes into ${imported.graph.nodes.length} IR nodes, ` +
        `${imported.variables.size} weights${setup.loss !== undefined ? `, ${Object.keys(imported.graph.roles.gradients ?? {}).length} trained` : ''}`,
    );
    cesLog.debug(() => `${imported.tensorInfo.size - imported.tensorValues.size} tensor(s) are constant expressions, computed at import`);
    return imported;
  }

  /** With several micro-batches per step, every input needs the same micro-batch (first) dimension: it. */
  private checkInputBatching(where: string): number {
    const steps = microBatchesPerStep(this.factors);
    const first = this.inputSignature[0]?.shape[0] ?? 1;
    if (steps === 1) return first;
    this.inputSignature.forEach((s, i) => {
      if (s.shape.length === 0 || s.shape[0] !== first) {
        throw new PopartException(
          `${where}: a step runs ${steps} micro-batches (batchesPerStep ${this.factors.batchesPerStep} × accumulationFactor ${this.factors.accumulationFactor} × ` +
            `replicationFactor ${this.factors.replicationFactor}), and poptfjs splits every input along its first (micro-batch) dimension: input ` +
            `'${this.imported.inputNames[i]}' has shape [${s.shape.join(', ')}] but '${this.imported.inputNames[0]}' has shape [${this.inputSignature[0]!.shape.join(', ')}]`,
        );
      }
    });
    return first;
  }

  private checkAnchors(where: string): void {
    for (const name of this.dataFlow.anchors()) {
      const { dtype } = this.imported.tensorInfo.get(name)!;
      if (dtype !== 'float32' && dtype !== 'int32' && dtype !== 'bool') throw new PopartException(`${where}: anchor '${name}' is ${dtype}, which has no host buffer`);
      if (dtype === 'bool' && this.dataFlow.art(name).id === 'Sum') throw new PopartException(`${where}: anchor '${name}' is boolean and cannot be returned as a Sum`);
    }
  }

  private assertUsable(what: string): void {
    if (this.disposed) throw new PopartRuntimeError(`${what}: the session was disposed`);
  }

  private requireCompiled(what: string): Executable {
    this.assertUsable(what);
    if (!this.executable) throw new PopartRuntimeError(`${what}: the session is not compiled yet; call prepareDevice() first`);
    return this.executable;
  }

  private requireLoaded(what: string): LoadedSession {
    this.assertUsable(what);
    if (!this.device) throw new PopartRuntimeError(`${what}: the device is not prepared; call prepareDevice() first`);
    return this.device;
  }

  /** The poptfjs optimizer a training session trains with. */
  protected abstract trainingOptimizer(): Optimizer | undefined;

  /** The executable loaded on the device, once prepared. */
  protected loadedExecutable(): LoadedExecutable | undefined {
    return this.device?.loaded;
  }

  /** What is compiled, for the executable file and cache. */
  private sessionGraph(): SessionGraph {
    return {
      kind: this.kind,
      graph: this.graph,
      inputSignature: this.inputSignature,
      variables: this.imported.variables,
      options: this.options,
      optimizer: this.trainingOptimizer(),
    };
  }

  private compileRequest(): GraphCompileRequest {
    const settings = this.options.settings;
    return {
      kind: this.kind,
      modelName: this.name,
      graph: this.graph,
      inputSignature: this.inputSignature,
      microBatchSize: this.microBatch,
      execution: executionSettings(settings, this.kind === 'training'),
      settings,
      optimizer: this.trainingOptimizer(),
      replicaGroupings: {},
      progress: new CompileProgress(),
      float16Flagged: true,
    };
  }

  private compileNow(request: GraphCompileRequest): Executable {
    const started = performance.now();
    const executable = compileGraph(request);
    log.info(() => `compiled '${this.name}' for ${this.kind} in ${(performance.now() - started).toFixed(1)} ms: ${executable.graph.nodes.length} nodes on ${executable.placement.ipusReserved} IPU(s)`);
    return executable;
  }

  private async compile(): Promise<Executable> {
    if (this.executable) return this.executable;
    const request = this.compileRequest();
    if (!this.settings.enableEngineCaching) {
      this.executable = this.compileNow(request);
      return this.executable;
    }
    const key = executableCacheKey(request, this.options.toJSON());
    const { executable, source } = await executableCache.obtain({ memory: key, disk: key }, this.settings.cachePath, () => executableFileContents(this.sessionGraph(), this.compileNow(request)));
    log.info(`executable of '${this.name}' from the ${source === 'compiled' ? 'compiler (now cached)' : source} (${this.settings.cachePath})`);
    this.executable = { ...executable, modelName: this.name };
    return this.executable;
  }

  /**
   * Compiles the session (or takes the executable `loadExecutable` read) and,
   * with `loadEngine` (the default), loads it on the device with the host
   * weights (see {@link Session.loadEngineAndConnectStreams}).
   */
  async prepareDevice(loadEngine = true): Promise<void> {
    this.assertUsable('prepareDevice');
    const executable = await this.compile();
    if (this.reportDirectory !== undefined) {
      const written = writeProfileReports(this.reportDirectory, executable);
      log.info(`profile reports written to ${written.json} and ${written.html}`);
    }
    if (loadEngine) this.loadEngineAndConnectStreams();
  }

  /**
   * Loads the compiled executable on the device (attaching it unless it is
   * `OnDemand`) and copies the host weights to it.
   */
  loadEngineAndConnectStreams(): void {
    const executable = this.requireCompiled('loadEngineAndConnectStreams');
    if (this.device) return;
    const binding = DeviceBinding.bind(this.deviceInfo, executable, this.deviceInfo.connectionType);
    const loaded = new LoadedExecutable(executable, this.trainingOptimizer(), this.seed ?? this.options.settings.randomSeed);
    loaded.loadWeights(this.imported.variables);
    this.device = { binding, loaded };
    devicexLog.debug(`loaded '${this.name}' on device ${this.deviceInfo.id} (${this.deviceInfo.kind}, ${this.deviceInfo.numIpus} IPU(s)) with the host weights`);
  }

  /** Buffers for the anchors of one step, each of the shape {@link Session.anchorArrayShape} gives, by anchor name. */
  initAnchorArrays(): Record<string, HostArray> {
    this.assertUsable('initAnchorArrays');
    const arrays: Record<string, HostArray> = {};
    for (const name of this.dataFlow.anchors()) arrays[name] = hostArrayOf(this.imported.tensorInfo.get(name)!.dtype, sizeOf(this.anchorArrayShape(name)));
    return arrays;
  }

  /**
   * The shape of the buffer of anchor `tensorId`:
   * `[batchesPerStep, accumulationFactor, replicationFactor, ...shape]` for
   * `All` (`batchesPerStep / N` for `EveryN`), `[replicationFactor, ...shape]`
   * for `Final` and `Sum`, without the factors that are 1.
   */
  anchorArrayShape(tensorId: string): number[] {
    return anchorArrayShape(this.dataFlow.art(tensorId), this.factors, this.imported.tensorInfo.get(tensorId)!.shape);
  }

  /** The replicas a step runs. */
  get replicationFactor(): number {
    return this.factors.replicationFactor;
  }

  /** The micro-batches each weight update accumulates (1 for inference). */
  get accumulationFactor(): number {
    return this.factors.accumulationFactor;
  }

  /**
   * Runs one step: reads the inputs from `stepio`, runs
   * `batchesPerStep × accumulationFactor × replicationFactor` micro-batches
   * on the device (training: a weight update per batch) and writes the
   * anchors into `stepio`'s buffers. A device fault throws a
   * `poplar_recoverable_runtime_error` (`RecoverableError`, with its
   * `recoveryAction`) or a `poplar_unrecoverable_runtime_error`; the device's
   * weights are then lost: after the recovery (detach and attach the device),
   * call `weightsFromHost()` before running again.
   */
  run(stepio: StepIO, debugName?: string): void {
    const { binding, loaded } = this.requireLoaded('run');
    if (!(stepio instanceof StepIO)) throw new PopartException('run: expected a StepIO, e.g. new StepIO(inputs, session.initAnchorArrays())');
    this.checkDeviceCanRun('run');
    if (this.weightsLost) throw new PopartRuntimeError('run: the device lost its weights in a fault; call weightsFromHost() before running again');
    const executable = this.executable!;
    if (!executable.hardware.memory.fits) throw new OutOfMemoryError(executable.hardware.memory, executable.microBatchSize, executable.modelName);
    binding.readyToRun(this.deviceInfo.connectionType);
    const inputs = stepInputs(stepio, this.imported.inputNames, this.imported.tensorInfo, this.factors);
    let result: ReturnType<LoadedExecutable['run']>;
    try {
      result = loaded.run(inputs, binding.observer());
    } catch (error) {
      if (error instanceof PoplarSystemRuntimeError) this.weightsLost = true;
      throw error;
    } finally {
      tf.dispose(inputs);
    }
    try {
      this.dataFlow.anchors().forEach((name, i) => {
        const values = anchorValues(this.dataFlow.art(name), this.factors, this.imported.tensorInfo.get(name)!.shape, result.outputs[i]!);
        try {
          writeAnchor(stepio, name, values);
        } finally {
          values.dispose();
        }
      });
    } finally {
      tf.dispose([...result.outputs, ...(result.loss ? [result.loss] : [])]);
    }
    this.runs++;
    log.trace(() => `run ${this.runs}${debugName ? ` '${debugName}'` : ''} of '${this.name}'`);
  }

  private checkDeviceCanRun(what: string): void {
    const device = this.deviceInfo;
    const recovery = device.pendingRecovery;
    if (recovery !== undefined) {
      throw new PopartRuntimeError(
        `${what}: device ${device.id} needs ${recovery} after a fault: detach and attach it (deviceInfo.detach(); deviceInfo.attach()), then call weightsFromHost()`,
      );
    }
    device.checkReady();
    if (device.canRun && !device.isAttached && device.connectionType === 'Always') {
      throw new PopartRuntimeError(`${what}: device ${device.id} is detached; attach it (deviceInfo.attach()) first`);
    }
  }

  /** Copies the host weights to the device (after a fault, the optimizer state starts afresh too). */
  weightsFromHost(): void {
    const { loaded } = this.requireLoaded('weightsFromHost');
    this.checkDeviceCanRun('weightsFromHost');
    devicexLog.debug('Writing weights from host to device');
    loaded.loadWeights(this.imported.variables);
    if (this.weightsLost) loaded.discardOptimizerState();
    this.weightsLost = false;
  }

  /** Copies the device's weights to the host weights. */
  weightsToHost(): void {
    const { loaded } = this.requireLoaded('weightsToHost');
    if (this.weightsLost) throw new PopartRuntimeError('weightsToHost: the device lost its weights in a fault; the host weights are the last ones copied');
    devicexLog.debug('Writing weights to host');
    loaded.storeWeights(this.imported.variables);
  }

  /** The host weight of the initializer `name`; an error listing the weights otherwise. */
  private hostWeight(name: string, what: string): tf.Variable {
    const param = this.imported.parameterNames.get(name);
    if (param === undefined) {
      throw new PopartException(`${what}: the session has no weight '${name}'; its weights are ${[...this.imported.parameterNames.keys()].map((n) => `'${n}'`).join(', ')}`);
    }
    return this.imported.variables.get(param)!;
  }

  private weightBuffers(weights: WeightsIO, what: string): Array<[string, tf.Variable, HostArray]> {
    const entries = weights instanceof Map ? [...weights] : Object.entries(weights as Record<string, HostArray>);
    return entries.map(([name, buffer]) => {
      const variable = this.hostWeight(name, what);
      checkBuffer(buffer, variable.dtype, variable.size, true, `${what}: buffer of weight '${name}'`, variable.shape);
      return [name, variable, buffer];
    });
  }

  /** Copies the host weights named in `weights` into their buffers (call `weightsToHost()` first for the device's). */
  readWeights(weights: WeightsIO): void {
    this.assertUsable('readWeights');
    for (const [, variable, buffer] of this.weightBuffers(weights, 'readWeights')) buffer.set(variable.dataSync() as HostArray);
  }

  /**
   * Sets the host weights named in `weights` from their buffers, FLOAT16
   * weights rounded to float16 (call `weightsFromHost()` to send them to the device).
   */
  writeWeights(weights: WeightsIO): void {
    this.assertUsable('writeWeights');
    for (const [name, variable, buffer] of this.weightBuffers(weights, 'writeWeights')) {
      const half = this.imported.tensorInfo.get(name)?.elementType === OnnxElementType.FLOAT16;
      const value = tf.tensor(half ? roundFloat16Array(buffer as Float32Array) : buffer, variable.shape, variable.dtype);
      variable.assign(value);
      value.dispose();
    }
  }

  /**
   * Writes the model with the device's weights (the host weights if the
   * device is not prepared) to the ONNX file `path`, atomically.
   */
  modelToHost(path: string): void {
    this.assertUsable('modelToHost');
    if (this.device && !this.weightsLost) this.weightsToHost();
    writeModel(path, this.imported);
    log.info(`wrote '${this.name}' with its current weights to ${path}`);
  }

  /**
   * Sets the host weights from the initializers of the ONNX model `path`
   * (call `weightsFromHost()` to send them to the device). An initializer the
   * session's model does not have is an error, unless
   * `ignoreWeightsInModelWithoutCorrespondingHostWeight`.
   */
  resetHostWeights(path: string, ignoreWeightsInModelWithoutCorrespondingHostWeight = false): void {
    this.assertUsable('resetHostWeights');
    const own = new Set(this.imported.model.proto.graph!.initializer.map((t) => t.name));
    const assignments: Array<[tf.Variable, tf.Tensor]> = [];
    try {
      for (const proto of readModel(path).proto.graph!.initializer) {
        const name = proto.name ?? '';
        const param = this.imported.parameterNames.get(name);
        if (param === undefined) {
          if (own.has(name) || ignoreWeightsInModelWithoutCorrespondingHostWeight) continue;
          throw new PopartException(
            `resetHostWeights: ${path} has a weight '${name}' that the session does not have; pass ignoreWeightsInModelWithoutCorrespondingHostWeight = true to skip it`,
          );
        }
        const variable = this.imported.variables.get(param)!;
        const value = hostTensorToTf(tensorFromProto(proto), `resetHostWeights: weight '${name}' of ${path}`);
        assignments.push([variable, value]);
        if (value.shape.length !== variable.shape.length || value.shape.some((d, i) => d !== variable.shape[i])) {
          throw new PopartException(`resetHostWeights: weight '${name}' has shape [${value.shape.join(', ')}] in ${path}, but [${variable.shape.join(', ')}] in the session`);
        }
      }
      for (const [variable, value] of assignments) variable.assign(value);
    } finally {
      tf.dispose(assignments.map(([, value]) => value));
    }
  }

  /**
   * The summary report: memory per IPU, placement and schedule, and with
   * execution profiling the simulated execution ("Execution profiling not
   * enabled" otherwise), plus the sections `reportOptions` asks for.
   */
  getSummaryReport(): string {
    return sessionSummaryReport(this.requireCompiled('getSummaryReport'), this.executionProfiling, this.settings.reportOptions);
  }

  /** The report data: the compilation, and with execution profiling the runs. */
  getReport(): SessionReport {
    return sessionReport(this.requireCompiled('getReport'), this.executionProfiling, this.runs);
  }

  /** Compiles the session (without loading it) and writes its executable to `path`, for `loadExecutable`. */
  async compileAndExport(path: string): Promise<void> {
    this.assertUsable('compileAndExport');
    const executable = await this.compile();
    writeExecutableFile(path, executableFileContents(this.sessionGraph(), executable));
    log.info(`exported the executable of '${this.name}' to ${path}`);
  }

  /**
   * Uses the executable `compileAndExport` wrote to `path` instead of
   * compiling (call before `prepareDevice()`); it must come from the same
   * model, anchors and compile options.
   */
  loadExecutable(path: string): void {
    this.assertUsable('loadExecutable');
    if (this.executable) throw new PopartRuntimeError('loadExecutable: the session is already compiled; load the executable before prepareDevice()');
    this.executable = sessionExecutableFromFile(path, readExecutableFile(path), this.sessionGraph());
    log.info(`loaded the executable of '${this.name}' from ${path}`);
  }

  /**
   * Simulated cycles of the last run (needs
   * `SessionOptions.instrumentWithHardwareCycleCounter`).
   */
  getCycleCount(): number {
    const executable = this.requireCompiled('getCycleCount');
    if (!this.settings.instrumentWithHardwareCycleCounter) {
      throw new PopartException('getCycleCount: set SessionOptions.instrumentWithHardwareCycleCounter = true to count cycles');
    }
    if (this.runs === 0) throw new PopartRuntimeError('getCycleCount: the session has not run yet');
    return executable.hardware.timeline.cycles;
  }

  /** The names of every tensor of the model (inputs, weights, intermediate values, outputs), each of which can be anchored. */
  getAllTensorIds(): string[] {
    return [...this.imported.tensorInfo.keys()];
  }

  /** The shape and buffer type of tensor `tensorId`. */
  getInfo(tensorId: string): SessionTensorInfo {
    const info = this.imported.tensorInfo.get(tensorId);
    if (!info) throw new PopartException(`getInfo: the model has no tensor '${tensorId}'`);
    return { shape: [...info.shape], dataType: elementTypeName(elementTypeOfDtype(info.dtype)) };
  }

  /** Seeds the device's random generator (dropout and other random operators). */
  setRandomSeed(seed: number): void {
    this.assertUsable('setRandomSeed');
    this.seed = checkedArgument(z.number().int().nonnegative(), seed, 'setRandomSeed');
    this.device?.loaded.random.setState(new RandomSource(this.seed).getState());
  }

  /** Frees the session's device state and host weights and detaches the device; the session cannot be used afterwards. */
  dispose(): void {
    if (this.disposed) return;
    this.device?.loaded.dispose();
    this.device = undefined;
    this.deviceInfo.detach();
    this.imported.dispose();
    this.disposed = true;
  }
}
