/**
 * A compiled model: plain data that says what to run, where, in which order,
 * and how to batch it. It holds no tensors and no reference to the model's
 * source, so it can be serialized, cached and reloaded.
 */
import type { DataType } from '@tensorflow/tfjs';
import type { Graph } from '../ir/graph.js';
import type { HardwareAnalysis } from '../ipu/hardware_analysis.js';
import type { HostSyncPattern } from '../ipu/host_io.js';
import type { Float16Arithmetic } from './float16_arithmetic_settings.js';
import type { Placement } from '../strategy/placement.js';
import type { Schedule } from '../strategy/schedule.js';
import type { StreamingTransfer } from '../ipu/streaming_transfers.js';
import type { Structure } from '../trace/nested_values.js';
import type { BatchFactors } from './batch_plan.js';
import type { ResolvedOutputMode } from './output_mode.js';
import type { ReplicaGrouping } from './replica_grouping.js';
import type { ExecutableProgram } from './program.js';

/** Shape and dtype of one input micro-batch. */
export interface TensorSignature {
  readonly shape: readonly number[];
  readonly dtype: DataType;
}

/**
 * How the compiled program computes numbers: its float16 arithmetic
 * (`opts.Precision`) and whether the loss scale adapts during training
 * (`opts.Training.setAutomaticLossScaling`).
 */
export interface NumericalBehaviour extends Float16Arithmetic {
  readonly automaticLossScaling: boolean;
}

/** How gradients are reduced over accumulation steps and replicas. */
export interface GradientReduction {
  readonly type: 'Mean' | 'Sum';
  /** For Mean: divide once at the end (`Post`) or keep a running mean (`Running`). */
  readonly strategy: 'Post' | 'Running';
}

/**
 * How a model's inputs and outputs nest: the tensors of `inputSignature` and
 * of the graph's outputs are those of these structures, in flattened order.
 */
export interface IoStructure {
  /** The structure of each argument of a call (model inputs, then targets). */
  readonly inputs: readonly Structure[];
  /** The structure of the model's output (without a training model's loss). */
  readonly outputs: Structure;
}

/** A compiled model. */
export interface Executable {
  readonly kind: 'training' | 'inference';
  readonly modelName: string;
  readonly graph: Graph;
  /** One entry per tensor passed to `run` (model inputs, then targets), for one micro-batch. */
  readonly inputSignature: readonly TensorSignature[];
  readonly microBatchSize: number;
  readonly factors: BatchFactors;
  readonly outputMode: ResolvedOutputMode;
  /** The period of `EveryN`. */
  readonly outputReturnPeriod: number;
  readonly reduction: GradientReduction;
  /** How many outputs the model returns (a training model's loss not included). */
  readonly outputCount: number;
  /** Whether the model returned a single tensor (rather than a list). */
  readonly singleOutput: boolean;
  /**
   * How a function model's inputs and outputs nest (arrays and plain objects
   * of tensors and plain values). Absent: tensors only, the outputs as
   * `singleOutput` says (a layers model).
   */
  readonly ioStructure?: IoStructure;
  /** Where each part of the model runs. */
  readonly placement: Placement;
  /**
   * The order units run in over one pipeline run: the gradient accumulation
   * steps of a device iteration (training), or the device iterations (inference).
   */
  readonly schedule: Schedule;
  /** Transfers to and from streaming memory around the schedule's steps (phased execution). */
  readonly streamingTransfers: readonly StreamingTransfer[];
  /** The memory and simulated time of the model on its target IPUs. */
  readonly hardware: HardwareAnalysis;
  /** How often each IR pattern fired at compile, by pattern name. */
  readonly firedPatterns: Readonly<Record<string, number>>;
  /** Weights split across replica groups, by parameter name. */
  readonly replicaGroupings: Readonly<Record<string, ReplicaGrouping>>;
  /** Whether replicas share the buffers the model updates (replica 0's value wins) or keep their own. */
  readonly broadcastBuffers: boolean;
  /** Float16 arithmetic and automatic loss scaling; absent: round to nearest, float32 partials, no exceptions, fixed loss scale. */
  readonly numerics?: NumericalBehaviour;
  /**
   * Whether the inputs are made on the device and the outputs are not copied
   * back (`Options.enableSyntheticData`): a call computes on random normal
   * inputs and returns zeros. Absent: false.
   */
  readonly syntheticData?: boolean;
  /**
   * How the IPUs synchronise with the host (`Options.syncPattern`), as the
   * timeline in `hardware` was laid out. Absent: `Full`.
   */
  readonly syncPattern?: HostSyncPattern;
  /**
   * The tensors anchored with `Options.anchorTensor`: anchor `i` is the graph
   * output `outputCount + i`, returned as its own output mode says. Absent: none.
   */
  readonly anchors?: readonly ExecutableAnchor[];
  /** The programs `Engine.run(index)` runs, in index order (a compiled model's: as PopART builds them). */
  readonly programs: readonly ExecutableProgram[];
  /**
   * The Poplar engine options it was compiled with (`compileGraph`'s
   * `options`, after `POPLAR_ENGINE_OPTIONS`), which an engine made from it
   * runs with. Absent: none.
   */
  readonly engineOptions?: Readonly<Record<string, string>>;
  /** The tensors kept off chip in streaming memory (`Options.TensorLocations`), as the engine's remote buffers. Absent: none. */
  readonly remoteBuffers?: readonly RemoteBufferSpec[];
}

/** A remote buffer: an off-chip weight (`weights/<parameter>`) or a slot of its optimizer state (`optimizerState/<slot>/<parameter>`). */
export interface RemoteBufferSpec {
  readonly handle: string;
  readonly kind: 'weight' | 'optimizerState';
  readonly param: string;
  /** The optimizer state slot (`optimizerState` buffers). */
  readonly slot?: string;
  /** Whether each replica holds a shard of it (replicated tensor sharding) rather than the whole. */
  readonly sharded: boolean;
}

/** A tensor anchored with `Options.anchorTensor`, as the executable returns it. */
export interface ExecutableAnchor {
  /** The short name it is read back under (`executor.getAnchoredTensor(name)`). */
  readonly name: string;
  /** The name it was anchored by. */
  readonly longName: string;
  readonly outputMode: ResolvedOutputMode;
  /** The period of `EveryN` (1 otherwise). */
  readonly outputReturnPeriod: number;
}
