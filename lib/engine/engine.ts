/**
 * `Engine`: Poplar's graph compute engine over the simulated IPU. An engine
 * is made from an executable (`compileGraph`'s, a compiled model's, or one
 * read with `Executable.fromFile`) or from a graph and its programs
 * (compiled on the spot); `load(device)` (`prepare` then `deploy`) puts it
 * on a device, and `run(index)` runs its programs: `weightsFromHost`,
 * `optimizerFromHost`, `step` and `weightsToHost` for a compiled model, as
 * PopART builds them (`executable.programs`).
 *
 * The step reads its inputs from and writes its outputs to the engine's
 * streams (`connectStream`, `connectStreamToCallback`, `listStreams`);
 * weights and optimizer state are read and written directly with
 * `readTensor` / `writeTensor`, and those `TensorLocations` keeps off chip
 * also with `copyFromRemoteBuffer` / `copyToRemoteBuffer` (off-chip
 * activations and accumulators hold no value between runs, so they have no
 * remote buffer: remote_buffers.ts). Engine options are checked and act as
 * lib/options/engine_option_table.ts says; the runtime options among them
 * are the defaults a `RuntimeOptions` given to `prepare` or `run`, then
 * `POPLAR_RUNTIME_OPTIONS`, override. Every run advances the
 * device's clock by the program's simulated cycles (`getTimeStamp`,
 * `Engine.reportTiming`), and, when the engine is instrumented
 * (`debug.instrument`, or `autoReport`'s execution profile), is recorded in
 * the execution profile (`getReport`, `printProfileSummary`,
 * `reportIntervals`). Faults are simulated as Poplar's
 * `insertSimulatedError` simulates them: after `load`, before `run`.
 *
 * PoplarExecutor and the PopART Session run their models through an engine
 * each: they give it their host weights and optimizer (`EngineHost`) and
 * run the step on host tensors (`runStep`).
 */
import * as tf from '@tensorflow/tfjs';
import { PoplarException, PoptfjsError } from '../common/errors.js';
import { getLogger } from '../common/log.js';
import { paramValues, type Node } from '../ir/graph.js';
import type { Device } from '../ipu/device.js';
import { SimulatedErrorCode, type ErrorLocation } from '../ipu/simulated_errors.js';
import type { ConnectionType } from '../option_vocabulary/enums.js';
import { checkEngineOptions, engineSettings, environmentEngineOptions, type EngineSettings } from '../options/engine_options.js';
import { environmentRuntimeFlags, RUNTIME_OPTION_NAMES, runtimeSettings } from '../options/runtime_options.js';
import type { Executable } from '../executable/executable.js';
import { microBatchesPerCall } from '../executable/batch_plan.js';
import { mapDeviceState, type DeviceState } from '../executable/device_state.js';
import type { ProgramName } from '../executable/program.js';
import { RandomSource } from '../executable/random_source.js';
import { replicaGroups } from '../executable/replica_grouping.js';
import type { TensorData } from '../proto/tensor_bytes.js';
import { tensorFromData } from '../files/tensor_data_conversion.js';
import { compileGraph, engineOptionsSource, type EngineOptionFlags } from '../compile/graph_compiler.js';
import type { ProgressCallback } from '../compile/compile_progress.js';
import type { ModelGraph } from '../compile/model_graph.js';
import type { InstanceGradients } from '../runtime/instance_gradients.js';
import { LoadedExecutable, type CallResult } from '../runtime/loaded_executable.js';
import { printNodeText } from '../runtime/tensor_print.js';
import type { MeasuredOverlap } from '../runtime/worker_ipus/measured_overlap.js';
import type { Optimizer } from '../../optim/optimizer.js';
import type { OptimizerStateData, OptimizerStateStore } from '../../optim/optimizer_state.js';
import { DeviceBinding } from './device_binding.js';
import { activityIntervals, ExecutionProfile, intervalsCsv } from './execution_profile.js';
import { instrumentationSwitches, isInstrumented, stepInstrumentation, type InstrumentationSwitches, type StepInstrumentation } from './step_instrumentation.js';
import type { RuntimeOptions } from './runtime_options.js';
import { bufferTypeOf, executableStreams, StreamConnections, type HostBuffer, type StreamCallback } from './engine_streams.js';
import { engineReport, profileSummary, type EngineReport } from './profile_summary.js';
import { programCycles } from './program_cycles.js';
import { programPlacements, unitPrograms } from './program_locations.js';
import { reportTiming, type TimerTimePoint } from './timer_time_point.js';
import { RemoteBuffers } from './remote_buffers.js';
import { hostTensor, tensorBuffer } from './host_tensors.js';

const log = getLogger('engine');

/** Size in bytes of the scratch space available to each worker thread (Poplar's `WORKER_SCRATCH_SIZE`). */
export const WORKER_SCRATCH_SIZE = 48;

/** Where text goes: a Node stream or anything with `write(text)`. */
export interface TextSink {
  write(text: string): unknown;
}

/** What the engine's host side holds besides its streams: what a framework (PopTorch, PopART) gives its engine. */
export interface EngineHost {
  /** The optimizer the step trains with (training). */
  readonly optimizer?: Optimizer | undefined;
  /** The seed of the device's random generator; default: `prng.seed`, else a random one. */
  readonly seed?: number | undefined;
  /** Run the units of each IPU on a worker thread of its own (`Options.parallelIpus`). */
  readonly parallelIpus?: boolean;
  /** One instance of a multi-instance run: gradients are summed over every instance before each update. */
  readonly instances?: InstanceGradients | undefined;
  /** How the device is attached when the engine is prepared; default: the device's own. */
  readonly connectionType?: ConnectionType;
  /**
   * The host weights, by parameter name: loaded on the device when the
   * engine is loaded; `weightsFromHost` copies from and `weightsToHost` into
   * those whose stream is not connected.
   */
  readonly hostWeights?: ReadonlyMap<string, tf.Variable>;
  /** The device state the engine starts from when loaded (an export's: weights, optimizer state, generator, iterations). */
  readonly initialState?: DeviceState<TensorData>;
}

/** What an engine's programs and streams need of an executable's parameter: its host shape. */
function hostShapeOf(executable: Executable, name: string): number[] {
  const value = paramValues(executable.graph).get(name)!;
  const grouping = executable.replicaGroupings[name];
  if (!grouping) return [...value.shape];
  const replicas = executable.factors.replicationFactor;
  const slices = grouping.retrieval === 'AllReplicas' ? replicas : replicaGroups(grouping.type, grouping.groupSize, replicas).length;
  return [slices, ...value.shape];
}

/** The simulated-error codes, by value. */
const ERROR_CODES: readonly string[] = Object.values(SimulatedErrorCode);

/** A graph compute engine. */
export class Engine implements OptimizerStateStore {
  /** Size in bytes of the scratch space available to each worker thread. */
  static readonly WORKER_SCRATCH_SIZE = WORKER_SCRATCH_SIZE;

  /** The executable the engine runs. */
  readonly executable: Executable;
  private readonly options: Readonly<Record<string, string>>;
  private readonly settings: EngineSettings;
  private readonly host: EngineHost;
  private readonly streams: StreamConnections;
  private readonly profile: ExecutionProfile;
  private readonly instrumentation: InstrumentationSwitches;
  /** What each recorded run of the step holds, made at its first run. */
  private stepRecord: StepInstrumentation | undefined;
  /** The runtime options `prepare` was given, over the engine's own. */
  private preparedRuntimeFlags: Readonly<Record<string, string>> = {};
  private readonly remoteBuffers: RemoteBuffers;
  private optimizer: Optimizer | undefined;
  private binding: DeviceBinding | undefined;
  private loaded: LoadedExecutable | undefined;
  private deviceCycles = 0;
  private printTensorSink: TextSink | undefined;
  private printSink: TextSink | undefined;
  private destroyed = false;
  /** True once a step found every weight on the device (they stay there until the engine is loaded again). */
  private weightsPresent = false;

  /**
   * An engine for `executable`, with Poplar engine options `options` (they
   * must agree with those it was compiled with on what compiling decides;
   * `POPLAR_ENGINE_OPTIONS` overrides them) and, for a framework, its host side.
   */
  constructor(executable: Executable, options?: EngineOptionFlags, host?: EngineHost);
  /** Compiles `graph` and its programs (see `compileGraph`) into an engine. */
  constructor(graph: ModelGraph, programs?: readonly string[], options?: EngineOptionFlags, progress?: ProgressCallback);
  constructor(source: Executable | ModelGraph, second?: EngineOptionFlags | readonly string[], third?: EngineOptionFlags | EngineHost, progress?: ProgressCallback) {
    const fromExecutable = 'placement' in source && 'programs' in source;
    if (fromExecutable) {
      this.executable = source as Executable;
      const exported = 'exported' in source ? (source as { exported: { host: EngineHost } }).exported.host : {};
      this.host = (third as EngineHost | undefined) ?? exported;
      // A framework applied its engine options when it compiled: they are checked against the executable's only if it recorded some.
      const strict = third === undefined || this.executable.engineOptions !== undefined;
      this.options = this.engineOptions((second as EngineOptionFlags | undefined) ?? {}, strict);
    } else {
      const graph = source as ModelGraph;
      const options = (third as EngineOptionFlags | undefined) ?? {};
      this.executable = compileGraph(graph, second as readonly string[] | undefined, options, progress);
      this.host = { optimizer: graph.optimizer };
      this.options = this.engineOptions(options, true);
    }
    this.settings = engineSettings(this.options, engineOptionsSource('Engine options'));
    this.checkTiles();
    this.optimizer = this.host.optimizer;
    if (this.executable.kind === 'training' && !this.optimizer) {
      throw new PoptfjsError(`Engine: '${this.executable.modelName}' is a training executable; give the optimizer its step trains with`, { type: 'engine' });
    }
    this.remoteBuffers = new RemoteBuffers(this.executable);
    this.streams = new StreamConnections(executableStreams(this.executable, (name) => hostShapeOf(this.executable, name)));
    this.instrumentation = instrumentationSwitches(this.options, this.settings.executionProfile, this.executable);
    this.profile = new ExecutionProfile(isInstrumented(this.instrumentation), Number(this.options['autoReport.executionProfileProgramRunCount'] ?? 2));
  }

  /** The options the engine runs with: the executable's, `options` over them, `POPLAR_ENGINE_OPTIONS` over both; an error where `options` contradict what was compiled. */
  private engineOptions(options: EngineOptionFlags, strict: boolean): Record<string, string> {
    const compiled = this.executable.engineOptions ?? {};
    checkEngineOptions(options, engineOptionsSource('Engine options'));
    for (const key of ['debug.allowOutOfMemory', 'prng.enableStochasticRounding']) {
      if (strict && options[key] !== undefined && options[key] !== (compiled[key] ?? 'false')) {
        throw new PoptfjsError(
          `Engine options: '${key}' is '${options[key]}', but the executable was compiled with '${compiled[key] ?? 'false'}'; the options must be those given to compileGraph`,
          { type: 'invalid_option' },
        );
      }
    }
    const environment = environmentEngineOptions();
    if (environment) checkEngineOptions(environment.options, environment.source);
    return { ...compiled, ...options, ...environment?.options };
  }

  /** The tiles the instrumentation options name must exist. */
  private checkTiles(): void {
    const { tiles } = this.executable.hardware.spec;
    const total = tiles * this.executable.placement.ipusReserved;
    const check = (key: string, limit: number, what: string) => {
      const value = this.options[key];
      if (value !== undefined && Number(value) >= limit) {
        throw new PoptfjsError(`Engine options: '${key}' is ${value}, but the device has ${limit} ${what}`, { type: 'invalid_option' });
      }
    };
    check('debug.profilingTile', tiles, 'tiles per IPU');
    check('debug.branchRecordTile', total, 'tiles');
  }

  /** The options the engine was created with (the executable's and the constructor's, under `POPLAR_ENGINE_OPTIONS`). */
  getEngineOptions(): Record<string, string> {
    return { ...this.options };
  }

  /** The device the engine is loaded on (after `prepare`). */
  get device(): Device {
    return this.requireBinding('device').device;
  }

  /** @internal The binding of the executable to its device (frameworks attach and check it). */
  get deviceBinding(): DeviceBinding {
    return this.requireBinding('deviceBinding');
  }

  /** True once `deploy` (or `load`) put the engine on its device. */
  get isLoaded(): boolean {
    return this.loaded !== undefined;
  }

  private assertUsable(what: string): void {
    if (this.destroyed) throw new PoptfjsError(`${what}: the engine was destroyed`, { type: 'engine' });
  }

  private requireBinding(what: string): DeviceBinding {
    this.assertUsable(what);
    if (!this.binding) throw new PoptfjsError(`${what}: the engine is not prepared; call load(device) (or prepare(device) and deploy()) first`, { type: 'engine' });
    return this.binding;
  }

  private requireLoaded(what: string): LoadedExecutable {
    this.assertUsable(what);
    if (!this.loaded) throw new PoptfjsError(`${what}: the engine is not loaded; call load(device) first`, { type: 'engine' });
    return this.loaded;
  }

  /**
   * Prepares `device` for loading: the executable is bound to it (its IPUs
   * must be enough) and the device is attached unless its connection is
   * `OnDemand` or `Never`. `runOptions` override the engine's runtime options
   * for every run from now on (`POPLAR_RUNTIME_OPTIONS` overrides them in turn).
   */
  prepare(device: Device, runOptions?: RuntimeOptions): void {
    this.assertUsable('prepare');
    if (this.loaded) throw new PoptfjsError('prepare: the engine is already loaded; load(device) again to start afresh', { type: 'engine' });
    this.binding = DeviceBinding.bind(device, this.executable, this.host.connectionType ?? device.connectionType);
    this.preparedRuntimeFlags = runOptions?.flags ?? {};
  }

  /** Applies the runtime options of a run: the engine's, `prepare`'s over them, `runOptions` over both, the environment's over all. */
  private applyRuntimeOptions(runOptions: RuntimeOptions | undefined): void {
    const own = Object.fromEntries(RUNTIME_OPTION_NAMES.filter((key) => this.options[key] !== undefined).map((key) => [key, this.options[key]!]));
    const settings = runtimeSettings(own, this.preparedRuntimeFlags, runOptions?.flags ?? {}, environmentRuntimeFlags());
    this.streams.hostSyncTimeout = settings.hostSyncTimeout;
  }

  /**
   * Loads the engine on the prepared device: the device's memory holds the
   * executable's state from now on: the host weights (if the engine has
   * them; else none until `weightsFromHost` or `writeTensor`), then the
   * initial device state (an export's).
   */
  deploy(): void {
    const binding = this.requireBinding('deploy');
    if (this.loaded) throw new PoptfjsError('deploy: the engine is already loaded', { type: 'engine' });
    let loaded: LoadedExecutable;
    try {
      loaded = new LoadedExecutable(this.executable, this.optimizer, this.host.seed ?? this.settings.seed, {
        // debug.cpuMultiThreadExecution "false" keeps every IPU on this thread.
        ...(this.host.parallelIpus && this.options['debug.cpuMultiThreadExecution'] !== 'false' ? { parallelIpus: true } : {}),
        ...(this.host.instances ? { instances: this.host.instances } : {}),
        printTensor: (node: Node, value: tf.Tensor) => this.printTensor(node, value),
      });
    } catch (error) {
      binding.device.detach();
      throw error;
    }
    try {
      if (this.host.hostWeights) loaded.loadWeights(this.host.hostWeights);
      if (this.host.initialState) loaded.importState(mapDeviceState(this.host.initialState, tensorFromData));
    } catch (error) {
      loaded.dispose();
      binding.device.detach();
      throw error;
    }
    this.loaded = loaded;
    this.weightsPresent = false;
    log.debug(() => `loaded '${this.executable.modelName}' on device ${binding.device.id}`);
  }

  /**
   * Loads the engine on `device` (`prepare` then `deploy`). Loading again
   * (on the same device when none is given) starts afresh, as Poplar's does
   * after `clearSimulatedErrors`: a device needing recovery after a fault is
   * reset, and the device state is that of a first load.
   */
  load(device?: Device): void {
    this.assertUsable('load');
    const target = device ?? this.binding?.device;
    if (!target) throw new PoptfjsError('load: give the device to load on', { type: 'engine' });
    if (this.loaded) {
      this.loaded.dispose();
      this.loaded = undefined;
    }
    if (target.pendingRecovery !== undefined) {
      target.detach();
      target.attach();
    }
    this.prepare(target);
    this.deploy();
  }

  /** Loads the engine on `device` and runs program `program`. */
  loadAndRun(device: Device, program = 0): void {
    this.load(device);
    this.run(program);
  }

  /** The programs' names, for messages. */
  private programList(): string {
    return this.executable.programs.map((p) => `${p.index}: ${p.name}`).join(', ');
  }

  /** The index of the program named `name`; an error if the executable has none. */
  programIndex(name: ProgramName): number {
    const program = this.executable.programs.find((p) => p.name === name);
    if (!program) throw new PoptfjsError(`the engine has no program '${name}'; its programs are ${this.programList()}`, { type: 'engine' });
    return program.index;
  }

  /**
   * Runs program `program` (an index into `executable.programs`) on the
   * loaded device; `debugName` names the run in the execution profile, and
   * `runOptions` override the runtime options for this run (see
   * {@link Engine.prepare}). An error for an index out of range, an engine
   * not loaded, or a device that cannot run (detached, offline, or waiting
   * for a recovery).
   */
  run(program = 0, debugName = '', runOptions?: RuntimeOptions): void {
    const loaded = this.requireLoaded('run');
    this.applyRuntimeOptions(runOptions);
    const count = this.executable.programs.length;
    if (!Number.isInteger(program) || program < 0 || program >= count) {
      throw new PoptfjsError(`run(${program}): the engine has ${count} program(s) (${this.programList()})`, { type: 'engine' });
    }
    const binding = this.binding!;
    binding.readyToRun(this.host.connectionType ?? binding.device.connectionType);
    const { name } = this.executable.programs[program]!;
    switch (name) {
      case 'weightsFromHost':
        this.weightsFromHost(loaded);
        break;
      case 'weightsToHost':
        this.weightsToHost(loaded);
        break;
      case 'optimizerFromHost':
        this.optimizerFromHost(loaded);
        break;
      case 'step':
        // The step records its run itself (runStep), as it does for a framework.
        this.stepFromStreams(debugName);
        return;
    }
    this.record(program, debugName);
  }

  /** Appends a run of `program` to the profile and advances the device's clock. */
  private record(program: number, debugName: string): void {
    const { name } = this.executable.programs[program]!;
    const optimizerValues = name === 'optimizerFromHost' && this.optimizer ? Object.keys(this.optimizer.settings().global).length : 0;
    const cycles = programCycles(this.executable, name, optimizerValues);
    if (name === 'step' && this.profile.recording) this.stepRecord ??= stepInstrumentation(this.executable, this.instrumentation);
    this.profile.add({ program, name, debugName, startCycle: this.deviceCycles, cycles, ...(name === 'step' && this.stepRecord ? { instrumentation: this.stepRecord } : {}) });
    this.deviceCycles += cycles;
  }

  /** `weightsFromHost`: each weight from its stream, or from the host weight of one not connected. */
  private weightsFromHost(loaded: LoadedExecutable): void {
    for (const stream of this.streams.streams) {
      if (stream.role !== 'weightFromHost') continue;
      const name = stream.of as string;
      if (this.streams.isConnected(stream.handle)) {
        const data = this.streams.read(stream.handle, 1, () => 0);
        const value = hostTensor(data, stream.shape, stream.dtype);
        loaded.loadWeight(name, value);
        value.dispose();
      } else {
        const variable = this.host.hostWeights?.get(name);
        if (!variable)
          throw new PoptfjsError(`weightsFromHost: stream '${stream.handle}' is not connected; connect it with connectStream or connectStreamToCallback`, { type: 'engine' });
        loaded.loadWeights(this.host.hostWeights!, [name]);
      }
    }
  }

  /** `weightsToHost`: each weight (replica 0's, or the replica groups' slices) to its stream, or into the host weight of one not connected. */
  private weightsToHost(loaded: LoadedExecutable): void {
    for (const stream of this.streams.streams) {
      if (stream.role !== 'weightToHost') continue;
      const name = stream.of as string;
      this.requireWeight(loaded, name, 'weightsToHost');
      if (this.streams.isConnected(stream.handle)) {
        const value = loaded.hostWeight(name);
        const data = tensorBuffer(value);
        value.dispose();
        this.streams.write(stream.handle, data, () => 0);
      } else {
        const variable = this.host.hostWeights?.get(name);
        if (!variable)
          throw new PoptfjsError(`weightsToHost: stream '${stream.handle}' is not connected; connect it with connectStream or connectStreamToCallback`, { type: 'engine' });
        loaded.storeWeights(new Map([[name, variable]]));
      }
    }
  }

  /** `optimizerFromHost`: the host optimizer's current values (its state starts afresh if its type changed). */
  private optimizerFromHost(loaded: LoadedExecutable): void {
    if (!this.optimizer) throw new PoptfjsError('optimizerFromHost: the engine has no host optimizer', { type: 'engine' });
    loaded.setOptimizer(this.optimizer);
  }

  private requireWeight(loaded: LoadedExecutable, name: string, what: string): void {
    if (!loaded.weight(name)) {
      throw new PoptfjsError(`${what}: weight '${name}' has no value on the device yet; run weightsFromHost or writeTensor('${name}', ...) first`, { type: 'engine' });
    }
  }

  /** The step on the data of its input streams; its outputs go to their streams. */
  private stepFromStreams(debugName: string): void {
    const { executable } = this;
    const f = executable.factors;
    const distinct = f.replicationFactor / f.inputGroupSize;
    const transfers = microBatchesPerCall(f);
    const inputs = this.streams.streams
      .filter((s) => s.role === 'input')
      .map((s) => {
        const data = this.streams.read(s.handle, transfers, (k) => k % distinct);
        return hostTensor(data, [s.shape[0]! * transfers, ...s.shape.slice(1)], s.dtype);
      });
    let result: CallResult;
    try {
      result = this.runStep(inputs, debugName);
    } finally {
      for (const t of inputs) t.dispose();
    }
    const replicaOf = (k: number) => k % f.replicationFactor;
    const sent = (handle: string, t: tf.Tensor) => {
      try {
        this.streams.write(handle, tensorBuffer(t), replicaOf);
      } finally {
        t.dispose();
      }
    };
    result.outputs.forEach((t, i) => sent(`output${i}`, t));
    if (result.loss) sent('loss', result.loss);
    for (const [name, t] of result.anchors ?? []) sent(`anchor/${name}`, t);
  }

  /**
   * Runs the step program on host tensors (each input's whole host batch, as
   * `PoplarExecutor` and a session's `StepIO` give them) and returns its
   * outputs (the caller owns them), as the step on connected streams does.
   * The device must be ready to run (the framework attaches it).
   */
  runStep(inputs: readonly tf.Tensor[], debugName = ''): CallResult {
    const loaded = this.requireLoaded('runStep');
    const step = this.programIndex('step');
    if (!this.weightsPresent) {
      for (const name of loaded.parameterNames) this.requireWeight(loaded, name, 'run');
      this.weightsPresent = true;
    }
    const result = loaded.run(inputs, this.binding!.observer());
    this.record(step, debugName);
    return result;
  }

  /** The streams, each handle followed by `+` (host-write) or `-` (host-read). */
  listStreams(): string[] {
    return this.streams.streams.map((s) => `${s.handle}${s.direction === 'host-write' ? '+' : '-'}`);
  }

  /**
   * Connects stream `handle` to a buffer (a typed array of its dtype), used
   * as a circular buffer of transfers (see engine_streams.ts).
   */
  connectStream(handle: string, buffer: HostBuffer): void {
    this.assertUsable('connectStream');
    this.streams.connectBuffer(handle, buffer);
  }

  /**
   * Connects stream `handle` to a callback, called with a buffer of one
   * transfer to fill (host-write) or read (host-read); with `index`, for the
   * transfers of that replica only.
   */
  connectStreamToCallback(handle: string, callback: StreamCallback): void;
  connectStreamToCallback(handle: string, index: number, callback: StreamCallback): void;
  connectStreamToCallback(handle: string, indexOrCallback: number | StreamCallback, callback?: StreamCallback): void {
    this.assertUsable('connectStreamToCallback');
    if (typeof indexOrCallback === 'function') this.streams.connectCallback(handle, undefined, indexOrCallback);
    else this.streams.connectCallback(handle, indexOrCallback, callback!);
  }

  /**
   * Copies repeat `repeatIndex` of remote buffer `handle` (an off-chip
   * weight or optimizer state slot, see `executable.remoteBuffers`) on
   * replica `replicationIndex` into `buffer` (a Float32Array of one repeat:
   * the tensor, or the replica's shard of a sharded one). Off-chip
   * activations and accumulators have none: the runtime keeps no value of
   * theirs between runs (see remote_buffers.ts).
   */
  copyFromRemoteBuffer(handle: string, buffer: Float32Array, repeatIndex: number, replicationIndex = 0): void {
    this.remoteBuffers.copyFrom(this.requireLoaded('copyFromRemoteBuffer'), handle, buffer, repeatIndex, replicationIndex);
  }

  /** Copies `buffer` into repeat `repeatIndex` of remote buffer `handle` on replica `replicationIndex` (see {@link Engine.copyFromRemoteBuffer}). */
  copyToRemoteBuffer(buffer: Float32Array, handle: string, repeatIndex: number, replicationIndex = 0): void {
    this.remoteBuffers.copyTo(this.requireLoaded('copyToRemoteBuffer'), buffer, handle, repeatIndex, replicationIndex);
  }

  /** The value behind a tensor handle: a weight (its host value) or an optimizer state slot (`<slot>/<parameter>`). */
  private tensorOf(handle: string, what: string): { value: tf.Tensor; write?: (t: tf.Tensor) => void } {
    const loaded = this.requireLoaded(what);
    if (paramValues(this.executable.graph).has(handle)) {
      this.requireWeight(loaded, handle, what);
      return { value: loaded.hostWeight(handle), write: (t) => loaded.loadWeight(handle, t) };
    }
    const slash = handle.indexOf('/');
    const state = loaded.readOptimizerState();
    const slot = handle.slice(0, slash);
    const param = handle.slice(slash + 1);
    for (const [key, record] of Object.entries(state.states)) {
      const data = record.slots[param]?.[slot];
      if (slash > 0 && data) {
        return {
          value: tf.tensor(data.data, [...data.shape], 'float32'),
          write: (t) => {
            const updated = {
              ...record,
              slots: { ...record.slots, [param]: { ...record.slots[param], [slot]: { shape: data.shape, data: Float32Array.from(t.dataSync()) } } },
            };
            loaded.writeOptimizerState({ ...state, states: { ...state.states, [key]: updated } });
          },
        };
      }
    }
    const slots = Object.values(state.states).flatMap((r) => Object.entries(r.slots).flatMap(([p, s]) => Object.keys(s).map((name) => `${name}/${p}`)));
    throw new PoptfjsError(
      `${what}('${handle}'): no such tensor; the tensors are the weights (${[...paramValues(this.executable.graph).keys()].join(', ')})${slots.length ? ` and the optimizer state (${slots.join(', ')})` : ''}`,
      { type: 'engine' },
    );
  }

  /**
   * Copies tensor `handle` (a weight, or an optimizer state slot as
   * `<slot>/<parameter>`) from the device into `buffer`, which must be a
   * typed array of its dtype and exactly its size.
   */
  readTensor(handle: string, buffer: HostBuffer): void {
    const { value } = this.tensorOf(handle, 'readTensor');
    try {
      const data = this.checkedBuffer(handle, value, buffer, 'readTensor');
      buffer.set(data);
    } finally {
      value.dispose();
    }
  }

  /** Copies `buffer` (a typed array of the tensor's dtype and exactly its size) to tensor `handle` on the device (every replica of a weight). */
  writeTensor(handle: string, buffer: HostBuffer): void {
    const { value, write } = this.tensorOf(handle, 'writeTensor');
    try {
      this.checkedBuffer(handle, value, buffer, 'writeTensor');
      const written = hostTensor(buffer, value.shape, value.dtype);
      write!(written);
      written.dispose();
    } finally {
      value.dispose();
    }
  }

  /** The data of `value`, after checking `buffer` matches it in type and size. */
  private checkedBuffer(handle: string, value: tf.Tensor, buffer: HostBuffer, what: string): HostBuffer {
    const type = bufferTypeOf(value.dtype);
    if (!type.accepts(buffer)) throw new PoptfjsError(`${what}('${handle}'): the tensor is ${value.dtype}; give a ${type.name}`, { type: 'engine' });
    if (buffer.length !== value.size) {
      throw new PoptfjsError(`${what}('${handle}'): the buffer holds ${buffer.length} elements, but the tensor has ${value.size} ([${value.shape.join(', ')}])`, {
        type: 'engine',
      });
    }
    return tensorBuffer(value);
  }

  /**
   * Where the device's printing goes. The simulated programs print only
   * tensors (print nodes, `ops.ipuPrintTensor`), so this stream receives them
   * unless {@link Engine.setPrintTensorStream} gave them one of their own.
   */
  setPrintStream(stream: TextSink): void {
    this.printSink = stream;
  }

  /**
   * Where print nodes (`ops.ipuPrintTensor`) run in this process print their
   * value; by default the print stream if set, else the `op` logger (stderr).
   */
  setPrintTensorStream(stream: TextSink): void {
    this.printTensorSink = stream;
  }

  private printTensor(node: Node, value: tf.Tensor): void {
    const text = printNodeText(node, value);
    const sink = this.printTensorSink ?? this.printSink;
    if (sink) sink.write(`${text}\n`);
    else getLogger('op').print(text);
  }

  /** The current host time and simulated device time. */
  getTimeStamp(): TimerTimePoint {
    return { hostNanoseconds: process.hrtime.bigint(), deviceCycles: this.deviceCycles, clockHz: this.executable.hardware.spec.clockHz, engine: this };
  }

  /** The timing report of the interval between two times of one engine: device cycles, their simulated time, and the host's. */
  static reportTiming(start: TimerTimePoint, end: TimerTimePoint): string {
    return reportTiming(start, end);
  }

  /** Discards the runs recorded in the execution profile. */
  resetExecutionProfile(): void {
    this.profile.reset();
  }

  /** Pauses execution profiling: runs from now on are not recorded. */
  disableExecutionProfiling(): void {
    this.profile.setPaused(true);
  }

  /** Resumes execution profiling. */
  enableExecutionProfiling(): void {
    this.profile.setPaused(false);
  }

  /** An error if profiles cannot be had: on a CPU device (Poplar's `profiling_disabled`). */
  private checkProfilable(what: string): void {
    if (this.binding?.device.kind === 'Cpu') throw new PoplarException(`${what}: profiling is not available on a CPU device`, { type: 'profiling_disabled' });
  }

  /**
   * The report: the compilation profile, and with `reportExecution` (when the
   * engine is instrumented) the execution profile of the runs recorded.
   */
  getReport(reportExecution = true): EngineReport {
    this.assertUsable('getReport');
    this.checkProfilable('getReport');
    return engineReport(this.executable, reportExecution && this.profile.instrumented ? this.profile.runs : undefined);
  }

  /**
   * Writes the summary of the compilation and execution profiles to
   * `stream`, with the sections `options` asks for (`showVarStorage`,
   * `showOptimizations`, `showExecutionSteps`: `"true"` or `"false"`).
   */
  printProfileSummary(stream: TextSink, options: Readonly<Record<string, string>> = {}): void {
    this.assertUsable('printProfileSummary');
    this.checkProfilable('printProfileSummary');
    const instrumented = this.profile.instrumented;
    stream.write(`${profileSummary(this.executable, instrumented, options, 'printProfileSummary', instrumented ? this.profile.runs : undefined)}\n`);
  }

  /**
   * Writes the activity of the step's recorded runs to `stream` as Poplar's
   * CSV of intervals: `begin,end,compute tiles,exchange tiles,sync tiles`,
   * in tile clock cycles. An error (`profiling_disabled`) when the engine is
   * not instrumented.
   */
  reportIntervals(stream: TextSink): void {
    this.assertUsable('reportIntervals');
    this.checkProfilable('reportIntervals');
    if (!this.profile.instrumented) {
      throw new PoplarException('reportIntervals: execution profiling is not enabled; set the engine option "debug.instrument" to "true"', { type: 'profiling_disabled' });
    }
    stream.write(intervalsCsv(activityIntervals(this.executable, this.profile.runs)));
  }

  /** The stage programs of the step (`F<stage>`, `B<stage>`), whose index is their program id. */
  private programIds(): string[] {
    return programPlacements(unitPrograms(this.executable))
      .map((p) => p.program)
      .filter((name) => /^[FB]\d+$/.test(name));
  }

  /**
   * The locations of a program of the step, by program id (an index into the
   * step's stage programs `F<stage>` / `B<stage>`, listed in the report) or
   * by vertex (kernel) name: one per IPU it runs on (its first tile), or the
   * one on `tile` (numbered across the device) if it runs there.
   */
  getSimulatedErrorLocations(program: number | string, tile?: number): ErrorLocation[] {
    this.assertUsable('getSimulatedErrorLocations');
    const ids = this.programIds();
    let name: string;
    if (typeof program === 'number') {
      if (!(Number.isInteger(program) && program >= 0 && program < ids.length)) {
        throw new PoptfjsError(`getSimulatedErrorLocations(${program}): the program ids are 0..${ids.length - 1} (${ids.map((p, i) => `${i}: ${p}`).join(', ')})`, {
          type: 'engine',
        });
      }
      name = ids[program]!;
    } else {
      name = program;
    }
    const placements = programPlacements(unitPrograms(this.executable));
    const placed = placements.find((p) => p.program === name);
    if (!placed) {
      throw new PoptfjsError(
        `getSimulatedErrorLocations('${name}'): the executable runs no program or vertex '${name}'; it runs ${placements.map((p) => p.program).join(', ')}`,
        {
          type: 'engine',
        },
      );
    }
    const { tiles } = this.executable.hardware.spec;
    if (tile === undefined) return placed.ipus.map((ipu) => ({ program: name, ipu, tile: ipu * tiles }));
    const total = tiles * this.executable.placement.ipusReserved;
    if (!(Number.isInteger(tile) && tile >= 0 && tile < total)) {
      throw new PoptfjsError(`getSimulatedErrorLocations: tile ${tile} is not on the device; its tiles are 0..${total - 1}`, { type: 'engine' });
    }
    const ipu = Math.floor(tile / tiles);
    return placed.ipus.includes(ipu) ? [{ program: name, ipu, tile }] : [];
  }

  /**
   * Simulates error `error` at `location` (from `getSimulatedErrorLocations`):
   * the next run reaching it throws a runtime error whose `errors` hold it
   * (`isSimulated`, `code`, `location`). Only after `load` and before the run;
   * an error if one is already simulated there.
   */
  insertSimulatedError(error: SimulatedErrorCode, location: ErrorLocation): void {
    this.requireLoaded('insertSimulatedError');
    if (!ERROR_CODES.includes(error))
      throw new PoptfjsError(`insertSimulatedError: '${error}' is not an error code; the codes are ${ERROR_CODES.join(', ')}`, { type: 'engine' });
    const placed = programPlacements(unitPrograms(this.executable)).find((p) => p.program === location.program);
    if (!placed?.ipus.includes(location.ipu)) {
      throw new PoptfjsError(`insertSimulatedError: ${location.program} on IPU ${location.ipu} is not a location of this engine; use getSimulatedErrorLocations`, {
        type: 'engine',
      });
    }
    this.binding!.device.insertSimulatedError(error, location);
  }

  /** Removes the error simulated at `location`; an error if there is none. */
  eraseSimulatedError(location: ErrorLocation): void {
    this.requireLoaded('eraseSimulatedError');
    this.binding!.device.eraseSimulatedError(location);
  }

  /** Removes every simulated error. Load again to run the programs from the beginning. */
  clearSimulatedErrors(): void {
    this.requireBinding('clearSimulatedErrors').device.clearSimulatedErrors();
  }

  // The host side of a framework's engine: its weights, optimizer and device state.

  /** @internal Copies the host weights of `variables` (those named in `names`, default all) to the device. */
  writeHostWeights(variables: ReadonlyMap<string, tf.Variable>, names?: readonly string[]): void {
    this.requireLoaded('writeHostWeights').loadWeights(variables, names);
  }

  /** @internal Copies the device's weights into the host weights of `variables`. */
  readHostWeights(variables: ReadonlyMap<string, tf.Variable>): void {
    this.requireLoaded('readHostWeights').storeWeights(variables);
  }

  /** Makes `optimizer` the host optimizer, whose values the `optimizerFromHost` program copies to the device. */
  setHostOptimizer(optimizer: Optimizer): void {
    this.assertUsable('setHostOptimizer');
    this.optimizer = optimizer;
  }

  /** @internal Makes `optimizer` the host optimizer and copies its values to the device (its state starts afresh if its type changed). */
  setOptimizer(optimizer: Optimizer): void {
    this.setHostOptimizer(optimizer);
    if (this.loaded) this.optimizerFromHost(this.loaded);
  }

  /** The loss scale the next training step uses. */
  get lossScale(): number {
    return this.requireLoaded('lossScale').lossScale;
  }

  /** A host copy of the device's optimizer state and loss scale. */
  readOptimizerState(): OptimizerStateData {
    return this.requireLoaded('readOptimizerState').readOptimizerState();
  }

  /** Replaces the device's optimizer state and loss scale. */
  writeOptimizerState(data: OptimizerStateData): void {
    this.requireLoaded('writeOptimizerState').writeOptimizerState(data);
  }

  /** @internal Forgets the optimizer state (the device lost it in a fault). */
  discardOptimizerState(): void {
    this.requireLoaded('discardOptimizerState').discardOptimizerState();
  }

  /** @internal A copy of the device state (the caller owns its tensors). */
  exportState(options: { weights: boolean }): DeviceState<tf.Tensor> {
    return this.requireLoaded('exportState').exportState(options);
  }

  /** @internal Replaces the device state (its tensors are owned from now on). */
  importState(state: DeviceState<tf.Tensor>): void {
    this.requireLoaded('importState').importState(state);
  }

  /** Seeds the device's random generator. */
  setRandomSeed(seed: number): void {
    this.requireLoaded('setRandomSeed').random.setState(new RandomSource(seed).getState());
  }

  /** With worker IPUs, what they measured over the last step; undefined otherwise. */
  measuredOverlap(): MeasuredOverlap | undefined {
    return this.loaded?.measuredOverlap();
  }

  /** @internal Ends the worker IPU threads, if any (the device is detached); the next step starts them again. */
  stopWorkerIpus(): void {
    this.loaded?.stopWorkerIpus();
  }

  /** Frees the device state (the device stays as it is); the engine cannot be used afterwards. */
  destroy(): void {
    if (this.destroyed) return;
    this.loaded?.dispose();
    this.loaded = undefined;
    this.destroyed = true;
  }
}
