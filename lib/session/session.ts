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
import { z } from 'zod';
import { PopartException, PopartRuntimeError } from '../common/errors.js';
import { getLogger } from '../common/log.js';
import type { Device } from '../device/device.js';
import { sizeOf } from '../ir/graph.js';
import { writeModel } from '../onnx/model_export.js';
import type { ImportedModel } from '../onnx/model_import.js';
import { elementTypeName, elementTypeOfDtype } from '../onnx/proto/onnx_element_type.js';
import type { Options } from '../options/options.js';
import { profileDirectory, writeProfileReports } from '../report/profile_report.js';
import type { Executable } from '../executable/executable.js';
import type { Engine } from '../engine/engine.js';
import type { Optimizer } from '../../optim/optimizer.js';
import { anchorArrayShape, hostArrayOf, type StepFactors } from './anchor_arrays.js';
import { checkedArgument } from './checked_argument.js';
import type { DataFlow } from './data_flow.js';
import { accumulationFactorOf, executionOptions, replicationFactorOf } from './execution_options.js';
import type { SessionSetup } from './session_arguments.js';
import { SessionCompilation } from './session_compilation.js';
import { SessionDevice } from './session_device.js';
import { readHostWeights, resetHostWeightsFromModel, writeHostWeights, type WeightsIO } from './session_host_weights.js';
import { importSessionModel } from './session_model_import.js';
import { sessionEngineSettings, sessionSettings, type SessionOptions, type SessionSettings } from './session_options.js';
import { sessionReport, sessionSummaryReport, type SessionReport } from './session_report.js';
import { runStep } from './session_run.js';
import { checkAnchorTypes, inputSignatureOf, stepMicroBatch } from './session_step_layout.js';
import type { HostArray, StepIO } from './step_io.js';
import type { StepIOCallback } from './step_io_callback.js';
import { virtualGraphPlacement } from './virtual_graph_placement.js';

const log = getLogger('session');

/** A tensor's shape and the ONNX element type its buffers hold. */
export interface SessionTensorInfo {
  readonly shape: number[];
  /** `FLOAT`, `INT32` or `BOOL`. */
  readonly dataType: string;
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
  private readonly factors: StepFactors;
  private readonly reportDirectory: string | undefined;
  private readonly executionProfiling: boolean;
  private readonly compilation: SessionCompilation;
  private device: SessionDevice | undefined;
  private runs = 0;
  private seed: number | undefined;
  private disposed = false;

  /** @internal Subclasses create sessions from the model {@link Session.importFor} imported. */
  protected constructor(setup: SessionSetup, imported: ImportedModel) {
    const { args } = setup;
    const where = setup.kind === 'training' ? 'TrainingSession' : 'InferenceSession';
    this.name = args.name ?? setup.kind;
    this.dataFlow = args.dataFlow;
    this.deviceInfo = args.deviceInfo;
    this.imported = imported;
    this.settings = sessionSettings(args.userOptions as SessionOptions | undefined);
    const engine = sessionEngineSettings(this.settings);
    this.reportDirectory = profileDirectory(engine.reportDirectory);
    this.executionProfiling = engine.executionProfile || (engine.reportDirectory === undefined && this.reportDirectory !== undefined);
    const training = setup.kind === 'training';
    this.factors = {
      batchesPerStep: args.dataFlow.batchesPerStep(),
      accumulationFactor: accumulationFactorOf(this.settings, training),
      replicationFactor: replicationFactorOf(this.settings),
    };
    const ipusPerReplica = Math.max(1, Math.floor(args.deviceInfo.numIpus / this.factors.replicationFactor));
    const placed = virtualGraphPlacement(imported.graph, imported.model.proto, this.settings, ipusPerReplica);
    this.options = executionOptions({
      settings: this.settings,
      engine,
      batchesPerStep: this.factors.batchesPerStep,
      training,
      strategy: placed.strategy,
      device: args.deviceInfo,
      patterns: args.patterns,
      modelName: this.name,
      reportDirectory: this.reportDirectory,
    });
    const inputSignature = inputSignatureOf(imported);
    const microBatch = stepMicroBatch(inputSignature, imported, this.factors, where);
    checkAnchorTypes(this.dataFlow, imported, where);
    this.compilation = new SessionCompilation({
      kind: setup.kind,
      name: this.name,
      graph: placed.graph,
      inputSignature,
      microBatch,
      variables: imported.variables,
      options: this.options,
      settings: this.settings,
      optimizer: () => this.trainingOptimizer(),
    });
  }

  /** Imports the model of `setup` (after checking the arguments); subclasses construct the session from it. */
  protected static async importFor(setup: SessionSetup, where: string): Promise<ImportedModel> {
    return importSessionModel(setup, where);
  }

  private assertUsable(what: string): void {
    if (this.disposed) throw new PopartRuntimeError(`${what}: the session was disposed`);
  }

  private requireCompiled(what: string): Executable {
    this.assertUsable(what);
    const executable = this.compilation.executable;
    if (!executable) throw new PopartRuntimeError(`${what}: the session is not compiled yet; call prepareDevice() first`);
    return executable;
  }

  private requireLoaded(what: string): SessionDevice {
    this.assertUsable(what);
    if (!this.device) throw new PopartRuntimeError(`${what}: the device is not prepared; call prepareDevice() first`);
    return this.device;
  }

  /** The poptfjs optimizer a training session trains with. */
  protected abstract trainingOptimizer(): Optimizer | undefined;

  /** The engine the session runs on, once its device is prepared. */
  get engine(): Engine | undefined {
    return this.device?.engine;
  }

  /**
   * Compiles the session (or takes the executable `loadExecutable` read) and,
   * with `loadEngine` (the default), loads it on the device with the host
   * weights (see {@link Session.loadEngineAndConnectStreams}).
   */
  async prepareDevice(loadEngine = true): Promise<void> {
    this.assertUsable('prepareDevice');
    const executable = await this.compilation.compile();
    if (this.reportDirectory !== undefined && !this.compilation.wroteReports) {
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
    this.device = SessionDevice.load({
      name: this.name,
      deviceInfo: this.deviceInfo,
      executable,
      optimizer: this.trainingOptimizer(),
      seed: this.seed ?? this.options.settings.randomSeed,
      variables: this.imported.variables,
      engineOptions: this.settings.engineOptions,
    });
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
   * Runs one step: reads the inputs from `stepio` (or its callbacks), runs
   * `batchesPerStep × accumulationFactor × replicationFactor` micro-batches
   * on the device (training: a weight update per batch) and writes the
   * anchors into `stepio`'s buffers. A device fault throws a
   * `poplar_recoverable_runtime_error` (`RecoverableError`, with its
   * `recoveryAction`) or a `poplar_unrecoverable_runtime_error`; the device's
   * weights are then lost: after the recovery (detach and attach the device),
   * call `weightsFromHost()` before running again.
   */
  run(stepio: StepIO | StepIOCallback, debugName?: string): void {
    const device = this.requireLoaded('run');
    runStep({ device, executable: this.compilation.executable!, imported: this.imported, dataFlow: this.dataFlow, factors: this.factors }, stepio, debugName);
    this.runs++;
    log.trace(() => `run ${this.runs}${debugName ? ` '${debugName}'` : ''} of '${this.name}'`);
  }

  /** Copies the host weights to the device (after a fault, the optimizer state starts afresh too). */
  weightsFromHost(): void {
    this.requireLoaded('weightsFromHost').weightsFromHost(this.imported.variables);
  }

  /** Copies the device's weights to the host weights. */
  weightsToHost(): void {
    this.requireLoaded('weightsToHost').weightsToHost(this.imported.variables);
  }

  /** Copies the host weights named in `weights` into their buffers (call `weightsToHost()` first for the device's). */
  readWeights(weights: WeightsIO): void {
    this.assertUsable('readWeights');
    readHostWeights(this.imported, weights);
  }

  /**
   * Sets the host weights named in `weights` from their buffers, FLOAT16
   * weights rounded to float16 (call `weightsFromHost()` to send them to the device).
   */
  writeWeights(weights: WeightsIO): void {
    this.assertUsable('writeWeights');
    writeHostWeights(this.imported, weights);
  }

  /**
   * Writes the model with the device's weights (the host weights if the
   * device is not prepared) to the ONNX file `path`, atomically.
   */
  modelToHost(path: string): void {
    this.assertUsable('modelToHost');
    if (this.device && !this.device.weightsLost) this.weightsToHost();
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
    resetHostWeightsFromModel(this.imported, path, ignoreWeightsInModelWithoutCorrespondingHostWeight);
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

  /** The compilation profile as JSON, as PopART's older `getGraphReport()`. */
  getGraphReport(): string {
    return JSON.stringify(this.getReport().compilation);
  }

  /** The execution profile as JSON, as PopART's older `getExecutionReport()`; an error without execution profiling. */
  getExecutionReport(): string {
    const { execution } = this.getReport();
    if (!execution) {
      throw new PopartException('getExecutionReport: execution profiling is not enabled; set userOptions.engineOptions to { "autoReport.outputExecutionProfile": "true" }');
    }
    return JSON.stringify(execution);
  }

  /** Compiles the session (without loading it) and writes its executable to `path`, for `loadExecutable`. */
  async compileAndExport(path: string): Promise<void> {
    this.assertUsable('compileAndExport');
    await this.compilation.exportTo(path);
  }

  /**
   * Uses the executable `compileAndExport` wrote to `path` instead of
   * compiling (call before `prepareDevice()`); it must come from the same
   * model, anchors and compile options.
   */
  loadExecutable(path: string): void {
    this.assertUsable('loadExecutable');
    this.compilation.loadFrom(path);
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
    this.device?.engine.setRandomSeed(this.seed);
  }

  /** Frees the session's device state and host weights and detaches the device; the session cannot be used afterwards. */
  dispose(): void {
    if (this.disposed) return;
    this.device?.engine.destroy();
    this.device = undefined;
    this.deviceInfo.detach();
    this.imported.dispose();
    this.disposed = true;
  }
}
