/**
 * PopTorch's execution strategies as plain data: what their `toJSON()`
 * produces, what `Options` serializes, and what the placement reads.
 */
import type { AutoStage, Liveness } from '../option_vocabulary/enums.js';

/** A stage as plain data: its blocks and, when assigned, its IPU. */
export interface StageData {
  /** The `user_id`s of the blocks this stage is made of. */
  readonly blocks: readonly string[];
  /** The IPU the stage runs on; absent when not assigned. */
  readonly ipu?: number;
}

/** A phase as plain data: the stages that run in parallel in it. */
export interface PhaseData {
  /** The stages of the phase, one per IPU of the phase's IPU group. */
  readonly stages: readonly StageData[];
}

/** `PipelinedExecution` or `ShardedExecution` as plain data. */
export interface StagedExecutionData {
  /** Which strategy. */
  readonly type: 'PipelinedExecution' | 'ShardedExecution';
  /** How stage ids are derived from blocks when `stages` is empty. */
  readonly autoStage: AutoStage;
  /** The explicit stages, in order; empty when the stages come from `autoStage`. */
  readonly stages: readonly StageData[];
}

/** `SerialPhasedExecution` or `ParallelPhasedExecution` as plain data. */
export interface PhasedExecutionData {
  /** Which strategy. */
  readonly type: 'SerialPhasedExecution' | 'ParallelPhasedExecution';
  /** The forward phases, in order. */
  readonly phases: readonly PhaseData[];
  /** Whether the backward pass gets phases of its own instead of sharing the last forward phase. */
  readonly separateBackwardPhase: boolean;
  /** Where tensors live between phases. */
  readonly tensorsLiveness: Liveness;
}

/** Any execution strategy as plain data, as produced by `toJSON()`. */
export type ExecutionStrategyData = StagedExecutionData | PhasedExecutionData;
