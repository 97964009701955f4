/**
 * The values of `Options` as plain, typed data: what `opts.settings` returns
 * and what the runtime reads, and (with the strategy serialized) what
 * `opts.toJSON()` returns. Unset optional values are absent keys.
 */
import type { ExecutionStrategy } from '../strategy/execution_strategy.js';
import type { ExecutionStrategyData } from '../strategy/execution_strategy_data.js';
import type { DistributedSettings } from './distributed_options.js';
import { CommGroupType, ConnectionType, OutputMode, SyncPattern, type TfjsBackendName } from '../option_vocabulary/enums.js';
import type { PrecisionSettings } from './precision_options.js';
import type { TensorLocationsSettings } from '../option_vocabulary/tensor_location_settings.js';
import type { TrainingSettings } from './training_options.js';
import type { PatternsLevel } from '../ir/patterns/pattern.js';
import type { IpuTargetSpec } from '../ipu/target_spec.js';
import type { RecomputationType } from '../strategy/recomputation.js';

/** How the replicas share the input data (see `Options.inputReplicaGrouping`). */
export interface InputReplicaGrouping {
  /** Replicas per group; all replicas of a group get the same data (default 1). */
  readonly size: number;
  /** How replicas are assigned to groups (default `Consecutive`). */
  readonly type: CommGroupType;
}

/** Which IR patterns (graph rewrites) run at compile (see `Options.patterns`). */
export interface PatternsSetting {
  /** The level: `NoPatterns`, `Minimal`, `Default` or `All`. */
  readonly level: PatternsLevel;
  /** Patterns switched on or off by name, on top of the level. */
  readonly overrides: Readonly<Record<string, boolean>>;
}

/** A tensor anchored with `Options.anchorTensor`, by its short name. */
export interface AnchoredTensor {
  /** The name of the tensor in the graph. */
  readonly longName: string;
  /** Which results to return; absent: the same as the model's outputs. */
  readonly outputMode?: OutputMode;
  /** The return period with `OutputMode.EveryN`; 1 otherwise. */
  readonly outputReturnPeriod: number;
}

/** The options that are not in a group, as plain data. */
export interface GeneralSettings {
  /** Batches the device runs per call (default 1). */
  readonly deviceIterations: number;
  /** Replicas of the model (default 1). */
  readonly replicationFactor: number;
  /** How replicas share the input data. */
  readonly inputReplicaGrouping: InputReplicaGrouping;
  /** Which results a run returns (default `Default`). */
  readonly outputMode: OutputMode;
  /** The return period with `OutputMode.EveryN`; 1 otherwise. */
  readonly outputReturnPeriod: number;
  /** Whether the number of IPUs is rounded up to a power of two (default false). */
  readonly autoRoundNumIPUs: boolean;
  /** Whether to target the IPU Model instead of IPU hardware (default false). */
  readonly useIpuModel: boolean;
  /** The device id to attach to; absent: any free device. */
  readonly ipuId?: number;
  /** The IPU version of an offline (compile-only) target; absent: not offline. */
  readonly offlineIpuVersion?: number;
  /** The seed of the device's random number generator; absent: unset. */
  readonly randomSeed?: number;
  /** The directory of the executable cache; absent: no caching. */
  readonly executableCachePath?: string;
  /** Whether host I/O is replaced by data generated on the device (default false). */
  readonly syntheticData: boolean;
  /** The directory of the log file `poptfjs.log` an executor appends its log lines to; absent: no log file. */
  readonly logDir?: string;
  /** The model's name in reports; absent: `inference` or `training`. */
  readonly modelName?: string;
  /** When to attach to the device (default `Always`). */
  readonly connectionType: ConnectionType;
  /** How IPUs synchronise (default `Full`). */
  readonly syncPattern: SyncPattern;
  /** Whether buffers are broadcast to all replicas (default true). */
  readonly broadcastBuffers: boolean;
  /** Anchored tensors by short name. */
  readonly anchoredTensors: Readonly<Record<string, AnchoredTensor>>;
  /** The buffers `copyNamedBuffersToDevice()` copies to the device (default none). */
  readonly updatableNamedBuffers: readonly string[];
  /** Whether unexpected optimizer attributes are debug messages instead of warnings (default false). */
  readonly relaxOptimizerAttributesChecks: boolean;
  /** Whether compilation shows a progress bar (default: whether stderr is a terminal). */
  readonly showCompilationProgressBar: boolean;
  /** The directory of profiling reports; absent: no profiling. */
  readonly profileDir?: string;
  /** The tfjs backend to run on; absent: whichever tfjs uses. */
  readonly backend?: TfjsBackendName;
  /** Whether the simulated IPUs run concurrently on the host (default false). */
  readonly parallelIpus: boolean;
  /** The IR patterns run at compile (default level `Default`). */
  readonly patterns: PatternsSetting;
  /** Overrides of the simulated IPU's hardware figures (default: none, a Mk2 GC200). */
  readonly ipuTarget: Readonly<Partial<IpuTargetSpec>>;
  /** Whether a model that does not fit still compiles, for the report (default false). */
  readonly allowOutOfMemory: boolean;
  /**
   * Which activations training recomputes in the backward pass; absent: PopTorch's default, `Pipeline` when the
   * model is pipelined over more than one IPU and `None` otherwise (see lib/strategy/compiler_defaults.ts).
   */
  readonly autoRecomputation?: RecomputationType;
  /** The proportion of each IPU's memory that kernels may use as temporary memory, by IPU (default 0.6). */
  readonly availableMemoryProportion: Readonly<Record<number, number>>;
}

/** The option groups, as plain data. */
export interface GroupSettings {
  /** `opts.Training`. */
  readonly training: TrainingSettings;
  /** `opts.Precision`. */
  readonly precision: PrecisionSettings;
  /** `opts.TensorLocations`. */
  readonly tensorLocations: TensorLocationsSettings;
  /** `opts.Distributed`. */
  readonly distributed: DistributedSettings;
}

/** Every value of an `Options`, as `opts.settings` returns it. */
export interface OptionsSettings extends GeneralSettings, GroupSettings {
  /** The execution strategy (default `PipelinedExecution(AutoStage.SameAsIpu)`). */
  readonly executionStrategy: ExecutionStrategy;
}

/** Every value of an `Options` as JSON data, as `opts.toJSON()` returns it. */
export interface OptionsData extends GeneralSettings, GroupSettings {
  /** The execution strategy as plain data. */
  readonly executionStrategy: ExecutionStrategyData;
}

/** PopTorch's defaults for {@link GeneralSettings}; the progress bar shows when stderr is a terminal. */
export function defaultGeneralSettings(): GeneralSettings {
  return {
    deviceIterations: 1,
    replicationFactor: 1,
    inputReplicaGrouping: { size: 1, type: CommGroupType.Consecutive },
    outputMode: OutputMode.Default,
    outputReturnPeriod: 1,
    autoRoundNumIPUs: false,
    useIpuModel: false,
    syntheticData: false,
    connectionType: ConnectionType.Always,
    syncPattern: SyncPattern.Full,
    broadcastBuffers: true,
    anchoredTensors: {},
    updatableNamedBuffers: [],
    relaxOptimizerAttributesChecks: false,
    showCompilationProgressBar: process.stderr.isTTY === true,
    parallelIpus: false,
    patterns: { level: 'Default', overrides: {} },
    ipuTarget: {},
    allowOutOfMemory: false,
    availableMemoryProportion: {},
  };
}

/**
 * The options that only matter when a compiled executable runs, not to what
 * is compiled: they may differ between the options an executable was compiled
 * with and the options it is loaded with.
 */
export const RUNTIME_OPTION_KEYS = [
  'ipuId',
  'connectionType',
  'logDir',
  'showCompilationProgressBar',
  'executableCachePath',
  'profileDir',
  'modelName',
  'relaxOptimizerAttributesChecks',
  'backend',
  'parallelIpus',
  'updatableNamedBuffers',
  // The instances of a run share one executable: the layout is applied when it runs.
  'distributed',
] as const satisfies readonly (keyof OptionsSettings)[];

/** The name of an option in {@link RUNTIME_OPTION_KEYS}. */
export type RuntimeOptionKey = (typeof RUNTIME_OPTION_KEYS)[number];
