/**
 * `OptionSetters`: the part of `Options` that options data, config files and
 * the environment write through — its setters, its option groups and its
 * settings snapshot. Readers of those sources depend on this interface, not on
 * the `Options` class, which implements it and is the only one that knows both.
 */
import type { PatternsLevel } from '../ir/patterns/pattern.js';
import type { IpuTargetName, IpuTargetSpec } from '../ipu/target_spec.js';
import type { CommGroupType, ConnectionType, OutputMode, SyncPattern, TfjsBackendName } from '../option_vocabulary/enums.js';
import type { ExecutionStrategy } from '../strategy/execution_strategy.js';
import type { RecomputationType } from '../strategy/recomputation.js';
import type { DistributedOptions } from './distributed_options.js';
import type { JitOptions } from './jit_options.js';
import type { OptionsSettings } from './options_settings.js';
import type { PrecisionOptions } from './precision_options.js';
import type { TensorLocationsOptions } from './tensor_locations_options.js';
import type { TrainingOptions } from './training_options.js';

/**
 * The setters, groups and settings of `Options`. Each member is the `Options`
 * member of the same name, documented there: every setter checks its argument
 * and returns the options, or throws naming the method, the value and what was
 * expected.
 */
export interface OptionSetters {
  /** Options specific to training. */
  readonly Training: TrainingOptions;
  /** Options about float16 and numerical behaviour. */
  readonly Precision: PrecisionOptions;
  /** Where each kind of tensor is stored. */
  readonly TensorLocations: TensorLocationsOptions;
  /** The process layout of a distributed run. */
  readonly Distributed: DistributedOptions;
  /** How the model is turned into a graph. */
  readonly Jit: JitOptions;
  /** A read-only snapshot of every value. */
  readonly settings: OptionsSettings;

  /** Batches the device processes per call. */
  deviceIterations(deviceIterations: number): this;
  /** Replicas of the model. */
  replicationFactor(replicationFactor: number): this;
  /** Groups of replicas that receive the same input data. */
  inputReplicaGrouping(inputGroupSize: number, inputGroupType: CommGroupType): this;
  /** Which results a run returns, and the return period of `EveryN`. */
  outputMode(outputMode: OutputMode, outputReturnPeriod?: number | null): this;
  /** The execution strategy. */
  setExecutionStrategy(strategy: ExecutionStrategy): this;
  /** Rounds the number of IPUs up to a power of two. */
  autoRoundNumIPUs(autoRoundNumIpus?: boolean): this;
  /** Targets the IPU Model instead of hardware. */
  useIpuModel(useModel: boolean): this;
  /** Attaches to the device with this id. */
  useIpuId(ipuId: number): this;
  /** Compiles for an offline target of this IPU version. */
  useOfflineIpuTarget(ipuVersion?: number): this;
  /** Seeds the device's random number generator. */
  randomSeed(randomSeed: number): this;
  /** Caches compiled executables in this directory; `null` disables caching. */
  enableExecutableCaching(path: string | null): this;
  /** Replaces host I/O with data generated on the device. */
  enableSyntheticData(enabled: boolean): this;
  /** The directory log files go to. */
  logDir(logDir: string): this;
  /** The model's name in reports, log lines and errors. */
  modelName(name: string): this;
  /** When to attach to the device. */
  connectionType(connectionType: ConnectionType): this;
  /** How the IPUs synchronise with the host. */
  syncPattern(syncPattern: SyncPattern): this;
  /** Whether buffers are broadcast to all replicas. */
  broadcastBuffers(broadcastBuffers?: boolean): this;
  /** Returns a graph tensor after each run under a short name. */
  anchorTensor(shortName: string, longName: string, outputMode?: OutputMode | null, outputReturnPeriod?: number | null): this;
  /** The buffers copied to the device without recompiling. */
  updatableNamedBuffers(buffers: readonly string[]): this;
  /** Whether the optimizer attributes an optimizer does not have are reported as debug messages instead of warnings. */
  relaxOptimizerAttributesChecks(relax?: boolean): this;
  /** Shows or hides the progress bar during compilation. */
  showCompilationProgressBar(show?: boolean): this;
  /** Writes profiling reports to this directory. */
  enableProfiling(profileDir?: string): this;
  /** Forces the tfjs backend the engine runs on. */
  backend(name: TfjsBackendName): this;
  /** The IR patterns run at compile. */
  patterns(level: PatternsLevel, overrides?: Readonly<Record<string, boolean>>): this;
  /** The simulated IPU, or figures overriding its target's. */
  ipuTarget(target: IpuTargetName | Readonly<Partial<IpuTargetSpec>>): this;
  /** Lets a model that does not fit compile anyway. */
  allowOutOfMemory(allow?: boolean): this;
  /** The proportion of each IPU's memory matrix products may use as temporary memory. */
  setAvailableMemoryProportion(proportions: Readonly<Record<string, number>>): this;
  /** Which activations the backward pass recomputes. */
  autoRecomputation(type: RecomputationType): this;
  /** Runs the simulated IPUs concurrently on the host. */
  parallelIpus(enabled: boolean): this;
}
