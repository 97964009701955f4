/**
 * `SessionOptions`: the options of a PopART session, set as fields as in
 * PopART (`opts.enablePipelining = true`). A session checks them when it is
 * created: an unknown field or a value of the wrong kind is an error naming
 * the field.
 */
import { z } from 'zod';
import { PopartException } from '../common/errors.js';
import { engineSettings, type EngineOptionsSource, type EngineSettings } from '../options/engine_options.js';
import { MeanReductionStrategy, ReductionType } from '../option_vocabulary/enums.js';
import { checkedArgument } from './checked_argument.js';
import { RecomputationType, VirtualGraphMode } from './session_enums.js';

/** Execution phase settings (PopART's `ExecutionPhaseSettings`). */
export interface ExecutionPhaseSettings {
  /** Number of execution phases; every `__execution_phase` must be below it (0: no phases). */
  phases: number;
  /**
   * IPUs a phase alternates over: 1, all phases on the same IPUs one after
   * another (serial); 2, even phases on one group and odd phases on the other
   * (parallel, the default).
   */
  stages: number;
}

/** The options of a session. Assign the fields, then pass the object as `userOptions`. */
export class SessionOptions {
  /** How operations are placed on IPUs (default `Off`: one IPU). */
  virtualGraphMode: VirtualGraphMode = VirtualGraphMode.Off;
  /** Run the virtual graphs as a pipeline over micro-batches (needs `Manual` or `Auto` placement). */
  enablePipelining = false;
  /** Accumulate the gradients of `accumulationFactor` micro-batches before each weight update (training). */
  enableGradientAccumulation = false;
  /** Micro-batches per weight update when gradient accumulation is enabled (default 1). */
  accumulationFactor = 1;
  /** Run `replicatedGraphCount` replicas of the graph, each on its own IPUs and data. */
  enableReplicatedGraphs = false;
  /** Replicas when replicated graphs are enabled (default 1). */
  replicatedGraphCount = 1;
  /** The execution phases of `VirtualGraphMode.ExecutionPhases`. */
  executionPhaseSettings: ExecutionPhaseSettings = { phases: 0, stages: 2 };
  /**
   * Which activations the backward pass recomputes instead of storing
   * (default `None`). Checked, but the simulated engine keeps every
   * activation: a session warns that another value changes nothing yet.
   */
  autoRecomputation: RecomputationType = RecomputationType.None;
  /** Round float16 results stochastically (default false). */
  enableStochasticRounding = false;
  /** The directory of cached executables (default `session_cache`), used with `enableEngineCaching`. */
  cachePath = 'session_cache';
  /** Keep compiled executables in `cachePath` and reuse them instead of compiling again (default false). */
  enableEngineCaching = false;
  /**
   * Poplar engine options: `autoReport.all`, `autoReport.outputExecutionProfile`
   * and `autoReport.directory` turn profiling on (the session's summary report
   * then includes the simulated execution, and reports are written to the
   * directory); `debug.allowOutOfMemory` compiles a model that does not fit.
   * Other Poplar engine options are accepted and have no effect on the
   * simulated engine; an option Poplar does not have is an error.
   */
  engineOptions: Record<string, string> = {};
  /**
   * Options of the summary report: `showVarStorage` lists every item stored
   * on each IPU, `showExecutionSteps` lists the simulated timeline's steps,
   * `showOptimizations` the graph rewrites that fired ("true" or "false").
   */
  reportOptions: Record<string, string> = {};
  /** How gradients are reduced over accumulation steps and replicas: `Sum` (PopART's default) or `Mean`. */
  accumulationAndReplicationReductionType: ReductionType = ReductionType.Sum;
  /** When a `Mean` reduction divides: `Post` (default) or `Running`. */
  meanAccumulationAndReplicationReductionStrategy: MeanReductionStrategy = MeanReductionStrategy.Post;
  /** Count the cycles of each run, for `session.getCycleCount()` (default false). */
  instrumentWithHardwareCycleCounter = false;
}

const flag = z.boolean();
const count = z.number().int().positive();

/** The schema of the options' fields. */
export const sessionOptionsSchema = z.strictObject({
  virtualGraphMode: z.enum(Object.values(VirtualGraphMode) as [VirtualGraphMode, ...VirtualGraphMode[]]),
  enablePipelining: flag,
  enableGradientAccumulation: flag,
  accumulationFactor: count,
  enableReplicatedGraphs: flag,
  replicatedGraphCount: count,
  executionPhaseSettings: z.strictObject({ phases: z.number().int().nonnegative(), stages: z.union([z.literal(1), z.literal(2)]) }),
  autoRecomputation: z.enum(Object.values(RecomputationType) as [RecomputationType, ...RecomputationType[]]),
  enableStochasticRounding: flag,
  cachePath: z.string().min(1),
  enableEngineCaching: flag,
  engineOptions: z.record(z.string(), z.string()),
  reportOptions: z.partialRecord(z.enum(['showVarStorage', 'showExecutionSteps', 'showOptimizations']), z.enum(['true', 'false'])),
  accumulationAndReplicationReductionType: z.enum([ReductionType.Sum, ReductionType.Mean]),
  meanAccumulationAndReplicationReductionStrategy: z.enum(Object.values(MeanReductionStrategy) as [MeanReductionStrategy, ...MeanReductionStrategy[]]),
  instrumentWithHardwareCycleCounter: flag,
});

/** The checked values of a {@link SessionOptions}. */
export type SessionSettings = Readonly<z.output<typeof sessionOptionsSchema>>;

/** The values of `options` (its own fields over the defaults), checked; an error naming the first bad field. */
export function sessionSettings(options: SessionOptions | undefined): SessionSettings {
  return checkedArgument(sessionOptionsSchema, { ...new SessionOptions(), ...(options ?? {}) }, 'SessionOptions');
}

/** Engine options of a session: PopART's errors for bad ones. */
const SESSION_ENGINE_OPTIONS: EngineOptionsSource = { name: 'SessionOptions.engineOptions', error: (message) => new PopartException(message) };

/** The checked engine options of `settings`; a `PopartException` naming a bad one. */
export function sessionEngineSettings(settings: SessionSettings): EngineSettings {
  return engineSettings(settings.engineOptions, SESSION_ENGINE_OPTIONS);
}
