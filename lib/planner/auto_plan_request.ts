/** What `autoPlan()` is asked: the IPUs, the global batch, the model's training and inputs, and the space to search. */
import type { PlanInput, PlanOptimizerName, PlanOptimizerTarget } from '../executor/model_plan.js';
import type { Options } from '../options/options.js';
import type { LossSpec } from '../trace/loss_function.js';
import type { Optimizer } from '../../optim/optimizer.js';
import type { SearchSpace } from './search_space.js';

/** What `autoPlan()` searches. */
export interface AutoPlanRequest {
  /** The IPUs in all: each candidate uses them all, as replicas of a pipeline over some of them. */
  readonly ipus: number;
  /** Samples per weight update over all replicas (training), or per step of all replicas (inference): micro-batch × replicas × gradient accumulation. */
  readonly globalBatch: number;
  /** Plan training (default: true when a loss, an optimizer or a target is given). */
  readonly training?: boolean;
  /** The optimizer, as for `plan()`. */
  readonly optimizer?: PlanOptimizerName | ((target: PlanOptimizerTarget) => Optimizer);
  /** The loss, as for `plan()`. */
  readonly loss?: LossSpec;
  /** The model's inputs: the shape of one sample each (no batch dimension; the search chooses the micro-batch). */
  readonly inputs: readonly PlanInput[];
  /** The training target: the shape of one sample (no batch dimension). */
  readonly target?: PlanInput;
  /** The options the search starts from and does not choose (target IPU, precision, ...). */
  readonly options?: Options;
  /** The choices to explore (default: see {@link SearchSpace}). */
  readonly space?: SearchSpace;
  /** Told `(candidates planned, what was planned last)` after each compile. */
  readonly progress?: (candidates: number, detail: string) => void;
}
