/**
 * `Options`: everything that controls how a model is compiled and run, as
 * PopTorch's `poptorch.Options`. Each option is a chainable method that checks
 * its argument where it is set; `opts.settings` is the typed snapshot the
 * runtime reads.
 */
import type { ExecutionStrategy } from '../strategy/execution_strategy.js';
import { executionStrategyFromJSON } from '../strategy/execution_strategy_from_json.js';
import { PipelinedExecutionSpec } from '../strategy/staged_execution.js';
import { checkArgument, describeValue, flag, nonEmptyString, nonNegativeInteger, positiveInteger } from '../option_vocabulary/argument_rules.js';
import { loadOptionsFile } from './config_file.js';
import { DistributedOptions } from './distributed_options.js';
import { JitOptions } from './jit_options.js';
import { PopartOptions } from './popart_options.js';
import { AutoStage, type CommGroupType, ConnectionType, OutputMode, type SyncPattern, type TfjsBackendName } from '../option_vocabulary/enums.js';
import { frozenOptionsError } from '../option_vocabulary/frozen_options.js';
import {
  backendRule,
  cachePathRule,
  checkReturnPeriod,
  commGroupTypeRule,
  connectionTypeRule,
  ipuVersionRule,
  outputModeRule,
  recomputationRule,
  strategyRule,
  syncPatternRule,
} from './general_option_rules.js';
import { applyOptionsData } from './options_data.js';
import { applyEnvironmentOptions } from './options_environment.js';
import type { OptionSetters } from './option_setters.js';
import { formatOptionsReport } from './options_report.js';
import { type AnchoredTensor, defaultGeneralSettings, type GeneralSettings, type OptionsData, type OptionsSettings } from './options_settings.js';
import { PrecisionOptions } from './precision_options.js';
import { TensorLocationsOptions } from './tensor_locations_options.js';
import { TrainingOptions } from './training_options.js';
import type { PatternsLevel } from '../ir/patterns/pattern.js';
import { patternsFromSetting } from '../ir/patterns/patterns.js';
import { targetSpec, type IpuTargetName, type IpuTargetSpec } from '../ipu/target_spec.js';
import type { RecomputationType } from '../strategy/recomputation.js';

/** How an {@link Options} starts. */
export interface OptionsInit {
  /**
   * Whether to start from the environment: `POPTFJS_DEFAULT_OPTIONS` (JSON
   * options applied over the defaults) and `POPTFJS_CACHE_DIR` (enables
   * executable caching there). Default true; false gives the built-in defaults.
   */
  readonly fromEnvironment?: boolean;
}

/**
 * The set of options controlling how a model is compiled and run. Pass it to
 * the model wrappers or a `DataLoader`; they freeze it (use
 * {@link Options.clone} to derive other options from it).
 *
 * ```ts
 * const opts = new Options().deviceIterations(4).replicationFactor(2);
 * opts.Training.gradientAccumulation(8);
 * ```
 *
 * Every setter returns the options (group setters return their group) and
 * throws a `TypeError` or `RangeError` naming the method, the value and what
 * was expected when its argument is wrong.
 */
export class Options implements OptionSetters {
  #values: GeneralSettings = defaultGeneralSettings();
  #strategy: ExecutionStrategy = new PipelinedExecutionSpec(AutoStage.SameAsIpu);
  #frozen = false;
  /** The snapshot {@link Options.settings} gives once frozen (values can no longer change). */
  #frozenSettings: OptionsSettings | undefined;
  readonly #guard = (method: string): void => {
    if (this.#frozen) throw frozenOptionsError(method);
  };

  /** Options specific to training (`opts.Training.gradientAccumulation(4)`). */
  readonly Training = new TrainingOptions(this.#guard);
  /** Options about float16 and numerical behaviour. */
  readonly Precision = new PrecisionOptions(this.#guard);
  /** Where each kind of tensor is stored. */
  readonly TensorLocations = new TensorLocationsOptions(this.#guard);
  /** The process layout of a distributed run. */
  readonly Distributed = new DistributedOptions(this.#guard);
  /** How the model is turned into a graph (PopTorch's `opts.Jit`). */
  readonly Jit = new JitOptions(this.#guard);
  /** PopART's session options and patterns, as PopTorch's `opts._Popart` (mapped onto these options). */
  readonly _Popart: PopartOptions = new PopartOptions(this);

  /**
   * PopTorch's defaults, then (unless `init.fromEnvironment` is false), as
   * PopTorch does, the process id and count Open MPI gives
   * (`OMPI_COMM_WORLD_RANK`, `OMPI_COMM_WORLD_SIZE`) in `Distributed`, the JSON
   * options in `POPTFJS_DEFAULT_OPTIONS`, the cache directory in
   * `POPTFJS_CACHE_DIR` (or PopTorch's `POPTORCH_CACHE_DIR`) and the IPU Model
   * in `POPTFJS_IPU_MODEL` (or `POPTORCH_IPU_MODEL`: `1` or `0`). Bad JSON or an unknown key in `POPTFJS_DEFAULT_OPTIONS`
   * is a `ConfigFileError` naming the variable.
   */
  constructor(init: OptionsInit = {}) {
    if (init.fromEnvironment === false) return;
    applyEnvironmentOptions(this);
  }

  /**
   * Rebuilds options from data in the shape {@link Options.toJSON} produces,
   * starting from the built-in defaults (not the environment). Keys may be left
   * out; an unknown key or a value its setter refuses is an `OptionsDataError`
   * naming the key's path.
   */
  static fromJSON(data: unknown): Options {
    const options = new Options({ fromEnvironment: false });
    applyOptionsData(options, data);
    return options;
  }

  /**
   * Batches the device processes per call (default 1): the device loops over
   * `deviceIterations` batches before returning to the host, so each call takes
   * `deviceIterations` times more data.
   */
  deviceIterations(deviceIterations: number): this {
    const where = this.#check('deviceIterations');
    return this.#set({ deviceIterations: checkArgument(positiveInteger, deviceIterations, where) });
  }

  /**
   * Replicas of the model (default 1). Each replica runs on its own IPUs and
   * processes its own data; a model on 2 IPUs replicated 4 times uses 8 IPUs.
   */
  replicationFactor(replicationFactor: number): this {
    const where = this.#check('replicationFactor');
    return this.#set({ replicationFactor: checkArgument(positiveInteger, replicationFactor, where) });
  }

  /**
   * Splits the replicas into groups of `inputGroupSize` that receive the same
   * input data, arranged by `inputGroupType`; the host batch then holds
   * `replicationFactor / inputGroupSize` replicas' worth of data instead of
   * `replicationFactor`.
   */
  inputReplicaGrouping(inputGroupSize: number, inputGroupType: CommGroupType): this {
    const where = this.#check('inputReplicaGrouping');
    const size = checkArgument(positiveInteger, inputGroupSize, `${where}: inputGroupSize`);
    const type = checkArgument(commGroupTypeRule, inputGroupType, `${where}: inputGroupType`);
    return this.#set({ inputReplicaGrouping: { size, type } });
  }

  /**
   * Which results a run returns: `All` (each micro-batch), `Final` (the last),
   * `Sum` (their sum), `EveryN` (every `outputReturnPeriod`-th, which is then
   * required) or `Default` (`All` for inference, `Final` for training). With
   * any mode but `EveryN`, a period is ignored (logged at info), as in PopTorch.
   */
  outputMode(outputMode: OutputMode, outputReturnPeriod?: number | null): this {
    const where = this.#check('outputMode');
    const mode = checkArgument(outputModeRule, outputMode, where);
    const period = checkReturnPeriod(mode, outputReturnPeriod, where);
    return this.#set({ outputMode: mode, outputReturnPeriod: period });
  }

  /**
   * The execution strategy: how blocks are grouped into stages and phases and
   * placed on IPUs (default `PipelinedExecution(AutoStage.SameAsIpu)`). The
   * options hold the strategy itself: changes made to it later still apply,
   * until the options are frozen.
   */
  setExecutionStrategy(strategy: ExecutionStrategy): this {
    const where = this.#check('setExecutionStrategy');
    this.#strategy = checkArgument(strategyRule, strategy, where);
    return this;
  }

  /**
   * Rounds the number of IPUs the model needs up to a power of two, leaving the
   * extra IPUs idle, instead of refusing other counts (default false).
   */
  autoRoundNumIPUs(autoRoundNumIpus = true): this {
    const where = this.#check('autoRoundNumIPUs');
    return this.#set({ autoRoundNumIPUs: checkArgument(flag, autoRoundNumIpus, where) });
  }

  /**
   * Targets the IPU Model (a host simulation of the IPU) instead of hardware.
   * Stored and reported; has no effect on the simulated engine yet.
   */
  useIpuModel(useModel: boolean): this {
    const where = this.#check('useIpuModel');
    return this.#set({ useIpuModel: checkArgument(flag, useModel, where) });
  }

  /**
   * Attaches to the device with this id (a single- or multi-IPU device); it must
   * have as many IPUs as the model uses times the replication factor. Runtime
   * only: see {@link RUNTIME_OPTION_KEYS}.
   */
  useIpuId(ipuId: number): this {
    const where = this.#check('useIpuId');
    return this.#set({ ipuId: checkArgument(nonNegativeInteger, ipuId, where) });
  }

  /**
   * Compiles for an offline target of IPU version `ipuVersion` (1: Mk1, 2: Mk2,
   * 21: Mk2 with FP8) without attaching to a device; also sets
   * `connectionType(ConnectionType.Never)`, so running raises an error.
   */
  useOfflineIpuTarget(ipuVersion = 2): this {
    const where = this.#check('useOfflineIpuTarget');
    const version = checkArgument(ipuVersionRule, ipuVersion, where);
    return this.#set({ offlineIpuVersion: version, connectionType: ConnectionType.Never });
  }

  /** Seeds the device's random number generator (a non-negative integer). */
  randomSeed(randomSeed: number): this {
    const where = this.#check('randomSeed');
    return this.#set({ randomSeed: checkArgument(nonNegativeInteger, randomSeed, where) });
  }

  /**
   * Saves compiled executables in the directory `path` and reuses them instead
   * of compiling identical models again; `null` disables caching. The
   * `POPTFJS_CACHE_DIR` environment variable does the same for every new
   * `Options`. Nothing is ever deleted from the cache.
   */
  enableExecutableCaching(path: string | null): this {
    const where = this.#check('enableExecutableCaching');
    const checked = checkArgument(cachePathRule, path, where);
    if (checked !== null) return this.#set({ executableCachePath: checked });
    const { executableCachePath: _removed, ...rest } = this.#values;
    this.#values = rest;
    return this;
  }

  /**
   * Replaces host I/O with data generated on the device, to measure a model as
   * if I/O were free (default false), as PopTorch's: float inputs are drawn
   * from a standard normal distribution on the device (integer and boolean
   * inputs are zeros), the host's input values are not read, outputs and the
   * loss are not copied back and come back as zeros, and the timeline has no
   * host transfer. Training still updates the weights (from the synthetic inputs).
   */
  enableSyntheticData(enabled: boolean): this {
    const where = this.#check('enableSyntheticData');
    return this.#set({ syntheticData: checkArgument(flag, enabled, where) });
  }

  /**
   * The directory log files go to, as PopTorch's `logDir`: while an executor
   * with these options compiles or runs, its log lines (at the levels set,
   * see `POPTFJS_LOG_LEVEL`) are also appended to `<logDir>/poptfjs.log`,
   * the directory created if missing. Unset (the default), no log file is
   * written. Runtime only.
   */
  logDir(logDir: string): this {
    const where = this.#check('logDir');
    return this.#set({ logDir: checkArgument(nonEmptyString, logDir, where) });
  }

  /**
   * The model's name in reports, log lines and errors (default: the tfjs
   * model's or function's name); as in PopTorch, profile reports go to a
   * subdirectory of this name. Runtime only.
   */
  modelName(name: string): this {
    const where = this.#check('modelName');
    return this.#set({ modelName: checkArgument(nonEmptyString, name, where) });
  }

  /**
   * When to attach to the device: `Always` (from the start, default),
   * `OnDemand` (once compiled) or `Never` (compile only). Runtime only.
   */
  connectionType(connectionType: ConnectionType): this {
    const where = this.#check('connectionType');
    return this.#set({ connectionType: checkArgument(connectionTypeRule, connectionType, where) });
  }

  /**
   * How the IPUs synchronise with the host, as PopTorch's `syncPattern`
   * ("Controls synchronisation in multi-IPU systems"), on the simulated
   * timeline (lib/ipu/host_io.ts):
   * - `Full` (default): "all IPUs synchronise on every communication between
   *   IPUs or between IPUs and host": every IPU waits for the call's host
   *   inputs before the schedule and its outputs after it;
   * - `SinglePipeline`: "IPUs synchronise with the host independently": each
   *   micro-batch's inputs go to the IPU that reads them in the step where it
   *   reads them, and its outputs leave the IPU that produces them in the step
   *   that produces them, while the other IPUs compute, so a pipeline's call
   *   is shorter when the transfers overlap compute on other IPUs;
   * - `ReplicaAndLadder` ("an IPU group [communicates] with the host without
   *   requiring synchronisation between groups") is refused at compile: the
   *   IPUs of a replica still synchronise together, as in `Full`, and the
   *   simulated replicas already meet the host independently and in step, so
   *   it would change nothing.
   * Kept with the executable.
   */
  syncPattern(syncPattern: SyncPattern): this {
    const where = this.#check('syncPattern');
    return this.#set({ syncPattern: checkArgument(syncPatternRule, syncPattern, where) });
  }

  /**
   * Whether buffers (non-trainable state such as batch-norm statistics) are
   * broadcast to all replicas (default true); false lets each replica keep its own.
   */
  broadcastBuffers(broadcastBuffers = true): this {
    const where = this.#check('broadcastBuffers');
    return this.#set({ broadcastBuffers: checkArgument(flag, broadcastBuffers, where) });
  }

  /**
   * Returns the graph tensor `longName` after each run under the name
   * `shortName`, read with `executor.getAnchoredTensor(shortName)`, as
   * PopTorch's anchors. `longName` names a tensor of the compiled graph that
   * `executor.irText()` prints: a value (`'%12'`), the output of a layer by the
   * layer name shown after `#` (`'dense_Dense1'`), or a weight's gradient as
   * PopART names it (`'Gradient___dense_Dense1/bias'`), in a training graph
   * a weight after the optimizer step (`'UpdatedVar___dense_Dense1/kernel'`)
   * or the loss scale the step used (`'finalLossScale'`); a name the graph
   * does not have is an error at compile listing the names it has.
   * `outputMode` (absent: as the model's outputs) and `outputReturnPeriod`
   * follow the rules of {@link Options.outputMode}, except that `EveryN`
   * without a period returns every device iteration (period 1), as PopTorch's
   * `anchorTensor` defaults it. Anchored values go to the host with
   * the outputs (the timeline's host transfer). Anchoring a short name again
   * replaces it.
   */
  anchorTensor(shortName: string, longName: string, outputMode?: OutputMode | null, outputReturnPeriod?: number | null): this {
    const where = this.#check('anchorTensor');
    const short = checkArgument(nonEmptyString, shortName, `${where}: shortName`);
    const long = checkArgument(nonEmptyString, longName, `${where}: longName`);
    let anchor: AnchoredTensor;
    if (outputMode === undefined || outputMode === null) {
      checkReturnPeriod(OutputMode.Default, outputReturnPeriod, where);
      anchor = { longName: long, outputReturnPeriod: 1 };
    } else {
      const mode = checkArgument(outputModeRule, outputMode, `${where}: outputMode`);
      const period = mode === OutputMode.EveryN ? (outputReturnPeriod ?? 1) : outputReturnPeriod;
      anchor = { longName: long, outputMode: mode, outputReturnPeriod: checkReturnPeriod(mode, period, where) };
    }
    // The anchors object belongs to these options alone (clone() and settings copy it), so it grows in
    // place: copying it on every call made n calls take quadratic time.
    const anchors = this.#values.anchoredTensors as Record<string, AnchoredTensor>;
    Object.defineProperty(anchors, short, { value: anchor, enumerable: true, writable: true, configurable: true });
    return this;
  }

  /**
   * Names the buffers (non-trainable `tf.Variable`s the model reads, by
   * name) that `executor.copyNamedBuffersToDevice()` copies from the host to
   * the device without recompiling, as PopTorch's `updatableNamedBuffers`.
   * Each name must be a buffer of the model: another name is an error when
   * the model is compiled. Runtime only.
   */
  updatableNamedBuffers(buffers: readonly string[]): this {
    const where = this.#check('updatableNamedBuffers');
    if (!Array.isArray(buffers)) throw new TypeError(`${where}: expected an array of buffer names, got ${describeValue(buffers)}`);
    const names = buffers.map((name, i) => checkArgument(nonEmptyString, name, `${where}: buffers[${i}]`));
    return this.#set({ updatableNamedBuffers: [...new Set(names)] });
  }

  /**
   * Attributes an optimizer does not have (such as `initialLr`, added to a
   * parameter group or set on the optimizer after the model was wrapped) are
   * ignored, as in PopTorch, with one warning each (`relax` false, the
   * default) or one debug message (`relax` true). Runtime only.
   */
  relaxOptimizerAttributesChecks(relax = true): this {
    const where = this.#check('relaxOptimizerAttributesChecks');
    return this.#set({ relaxOptimizerAttributesChecks: checkArgument(flag, relax, where) });
  }

  /** Shows or hides the progress bar during compilation (default: shown when stderr is a terminal). Runtime only. */
  showCompilationProgressBar(show = true): this {
    const where = this.#check('showCompilationProgressBar');
    return this.#set({ showCompilationProgressBar: checkArgument(flag, show, where) });
  }

  /** Writes profiling reports (compilation and execution) to the directory `profileDir`. Runtime only. */
  enableProfiling(profileDir = '.'): this {
    const where = this.#check('enableProfiling');
    return this.#set({ profileDir: checkArgument(nonEmptyString, profileDir, where) });
  }

  /**
   * Forces the tfjs backend the engine runs the arithmetic on: `'tensorflow'`
   * (`@tensorflow/tfjs-node`), `'wasm'` or `'cpu'`; the backend is switched when
   * the model is compiled (tfjs has one active backend per process). Absent,
   * `POPTFJS_BACKEND` or the best available backend is used. Runtime only.
   */
  backend(name: TfjsBackendName): this {
    const where = this.#check('backend');
    return this.#set({ backend: checkArgument(backendRule, name, where) });
  }

  /**
   * Chooses the IR patterns (graph rewrites such as transposed-matmul
   * lowering and constant folding) run at compile, as PopART's `Patterns`: a
   * level (`NoPatterns`, `Minimal`, `Default`, `All`) and patterns switched
   * on or off by name. Every pattern keeps the results within float tolerance.
   */
  patterns(level: PatternsLevel, overrides: Readonly<Record<string, boolean>> = {}): this {
    const where = this.#check('patterns');
    if (overrides === null || typeof overrides !== 'object' || Array.isArray(overrides)) {
      throw new TypeError(`${where}: overrides must be an object of pattern names to booleans, got ${describeValue(overrides)}`);
    }
    for (const [name, enabled] of Object.entries(overrides)) {
      if (typeof enabled !== 'boolean') throw new TypeError(`${where}: override '${name}' must be a boolean, got ${describeValue(enabled)}`);
    }
    const setting = { level, overrides: { ...overrides } };
    patternsFromSetting(setting);
    return this.#set({ patterns: setting });
  }

  /**
   * The simulated IPU: `'GC200'` (the Mk2 IPU, the default) or `'Bow'`, or
   * figures that override the target's (tiles, memory per tile, peak FLOP/s,
   * clock, bandwidths, ...; see `IpuTargetSpec`; `ipu` names the target they
   * override), e.g. a smaller IPU to see what does not fit.
   */
  ipuTarget(target: IpuTargetName | Readonly<Partial<IpuTargetSpec>>): this {
    const where = this.#check('ipuTarget');
    const overrides = typeof target === 'string' ? { ipu: target } : target;
    targetSpec(overrides as Partial<IpuTargetSpec>, where);
    return this.#set({ ipuTarget: { ...overrides } as Partial<IpuTargetSpec> });
  }

  /**
   * Lets a model that does not fit on its IPUs compile anyway, so its memory
   * report can be read (as PopART's `debug.allowOutOfMemory`); running it is
   * still refused.
   */
  allowOutOfMemory(allow = true): this {
    const where = this.#check('allowOutOfMemory');
    return this.#set({ allowOutOfMemory: checkArgument(flag, allow, where) });
  }

  /**
   * The proportion of each IPU's memory that matrix products and convolutions
   * may use as temporary memory, by IPU, as PopTorch's
   * `setAvailableMemoryProportion({ IPU0: 0.5 })` (default 0.6).
   */
  setAvailableMemoryProportion(proportions: Readonly<Record<string, number>>): this {
    const where = this.#check('setAvailableMemoryProportion');
    if (proportions === null || typeof proportions !== 'object' || Array.isArray(proportions)) {
      throw new TypeError(`${where}: expected an object such as { IPU0: 0.5 }, got ${describeValue(proportions)}`);
    }
    const byIpu: Record<number, number> = {};
    for (const [name, value] of Object.entries(proportions)) {
      const match = /^(?:IPU)?(\d+)$/.exec(name);
      if (!match) throw new RangeError(`${where}: keys must name IPUs as 'IPU0', 'IPU1', ...; got '${name}'`);
      if (typeof value !== 'number' || !(value > 0 && value <= 1)) {
        throw new RangeError(`${where}: the proportion of ${name} must be a number in (0, 1], got ${describeValue(value)}`);
      }
      byIpu[Number(match[1])] = value;
    }
    return this.#set({ availableMemoryProportion: byIpu });
  }

  /**
   * Chooses which activations the backward pass of a training model
   * recomputes instead of storing from the forward pass (PopART's
   * `autoRecomputation`; unset by default, and then, as in PopTorch,
   * `Pipeline` for a model pipelined over more than one IPU and `None`
   * otherwise): `Standard` (√n checkpointing per
   * stage, or the stage's own `ops.recomputationCheckpoint`s), `NormOnly`,
   * `Pipeline` or `RecomputeAll` (each stage stores only its inputs and its
   * checkpoints). Less activation memory for more compute: the memory report
   * and the timeline show both; the numbers computed are the same.
   */
  autoRecomputation(type: RecomputationType): this {
    const where = this.#check('autoRecomputation');
    return this.#set({ autoRecomputation: checkArgument(recomputationRule, type, where) });
  }

  /**
   * Runs the simulated IPUs of a multi-IPU model concurrently on the host
   * instead of one after another (default false). Runtime only: the
   * executable and the simulated timeline do not change.
   *
   * Each IPU that runs nodes gets a `node:worker_threads` thread with its own
   * tfjs backend (the main thread's choice), started on the first call and
   * ended by `detachFromDevice()` and `destroy()` (threads never keep the
   * process alive). The main thread dispatches the schedule's work items in
   * order with the inputs, weights and random numbers they need, so the items
   * of a pipeline step run at the same time on real cores; outputs,
   * gradient accumulation, loss scaling and the optimizer stay on the main
   * thread, and the numbers are the same, bit for bit, as in-process.
   * `executor.measuredOverlap()` and the summary report give the busy time of
   * each worker over the last call next to its wall time.
   *
   * Replicas run one after another on the same worker threads (one per IPU
   * of a replica), not in parallel. Phased units spanning several IPUs run on
   * the thread of their first IPU. A model on one IPU runs in-process, and so
   * does, with a WARN saying why, one whose numbers workers could not
   * reproduce (stochastic rounding draws random bits inside nodes) or whose
   * worker threads fail to start.
   */
  parallelIpus(enabled: boolean): this {
    const where = this.#check('parallelIpus');
    return this.#set({ parallelIpus: checkArgument(flag, enabled, where) });
  }

  /**
   * Applies the options in the file at `path`: either one option call per line
   * as in PopTorch (`deviceIterations(4)`, `Training.gradientAccumulation(2)`),
   * or JSON in the shape of {@link Options.toJSON} (a `.json` file, or content
   * starting with `{`). All or nothing: if any line fails, a `ConfigFileError`
   * naming the file, line and column is thrown and the options are unchanged.
   */
  loadFromFile(path: string): this {
    this.#check('loadFromFile');
    const draft = this.clone();
    const draftStrategy = draft.#strategy;
    loadOptionsFile(draft, path);
    this.#values = draft.#values;
    if (draft.#strategy !== draftStrategy) this.#strategy = draft.#strategy;
    this.Training.restore(draft.Training.settings);
    this.Precision.restore(draft.Precision.settings);
    this.TensorLocations.restore(draft.TensorLocations.settings);
    this.Distributed.restore(draft.Distributed.settings);
    return this;
  }

  /**
   * A read-only snapshot of every value; the runtime reads only this. Once
   * the options are frozen it is taken once and the same object is returned
   * at every read (an executor reads it at every call).
   */
  get settings(): OptionsSettings {
    if (this.#frozenSettings) return this.#frozenSettings;
    const settings: OptionsSettings = Object.freeze({ ...this.#data(), executionStrategy: this.#strategy });
    if (this.#frozen) this.#frozenSettings = settings;
    return settings;
  }

  /**
   * Makes these options (and their execution strategy) read-only: every setter
   * then throws a `PoptfjsError` telling to use {@link Options.clone}. The model
   * wrappers and `DataLoader` call it. A strategy shared with other options is
   * frozen for them too.
   */
  freeze(): this {
    this.#frozen = true;
    this.#strategy.freeze();
    return this;
  }

  /** True once {@link Options.freeze} has been called. */
  isFrozen(): boolean {
    return this.#frozen;
  }

  /** A deep, unfrozen copy of these options (the strategy is copied too). */
  clone(): Options {
    const copy = new Options({ fromEnvironment: false });
    copy.#values = structuredClone(this.#values);
    copy.#strategy = executionStrategyFromJSON(this.#strategy.toJSON());
    copy.Training.restore(this.Training.settings);
    copy.Precision.restore(this.Precision.settings);
    copy.TensorLocations.restore(this.TensorLocations.settings);
    copy.Distributed.restore(this.Distributed.settings);
    return copy;
  }

  /** Every value as JSON data; {@link Options.fromJSON} rebuilds identical options from it. */
  toJSON(): OptionsData {
    return { ...structuredClone(this.#data()), executionStrategy: this.#strategy.toJSON() };
  }

  /** A readable multi-line report of every value, for logs and reports. */
  toString(): string {
    return formatOptionsReport(this.settings, this.#frozen);
  }

  #data(): Omit<OptionsData, 'executionStrategy'> {
    return deepFreeze({
      ...structuredClone(this.#values),
      training: this.Training.settings,
      precision: this.Precision.settings,
      tensorLocations: this.TensorLocations.settings,
      distributed: this.Distributed.settings,
    });
  }

  #check(method: string): string {
    const where = `Options.${method}`;
    this.#guard(where);
    return where;
  }

  #set(change: Partial<GeneralSettings>): this {
    this.#values = { ...this.#values, ...change };
    return this;
  }
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
