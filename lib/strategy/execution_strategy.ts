/**
 * Any of PopTorch's execution strategies: `PipelinedExecution`,
 * `ShardedExecution`, `SerialPhasedExecution` or `ParallelPhasedExecution`,
 * as `Options` holds them.
 */
import { PhasedExecutionSpec, type ParallelPhasedExecutionSpec, type SerialPhasedExecutionSpec } from './phased_execution.js';
import { StagedExecutionSpec, type PipelinedExecutionSpec, type ShardedExecutionSpec } from './staged_execution.js';

/** Any execution strategy. Switch on `type` to tell them apart. */
export type ExecutionStrategy = PipelinedExecutionSpec | ShardedExecutionSpec | SerialPhasedExecutionSpec | ParallelPhasedExecutionSpec;

/** True when `value` is one of the four execution strategies. */
export function isExecutionStrategy(value: unknown): value is ExecutionStrategy {
  return value instanceof StagedExecutionSpec || value instanceof PhasedExecutionSpec;
}
