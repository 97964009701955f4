/** What `autoPlan()` is asked: the IPUs, the global batch, the model's training and inputs, and the space to search. */
import type { PlanInput, PlanRequest } from '../executor/model_plan.js';
import type { Options } from '../options/options.js';
import type { OnnxPlanRequest } from './onnx_plan.js';
import type { SearchSpace } from './search_space.js';

/** What `autoPlan()` searches; `training`, `optimizer` and `loss` as for `plan()`. */
export interface AutoPlanRequest extends Pick<PlanRequest, 'training' | 'optimizer' | 'loss'> {
  /** The IPUs in all: each candidate uses them all, as replicas of a pipeline over some of them. */
  readonly ipus: number;
  /** Samples per weight update over all replicas (training), or per step of all replicas (inference): micro-batch × replicas × gradient accumulation. */
  readonly globalBatch: number;
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

/** What `autoPlan()` searches for an ONNX model: as for a tfjs model, but its loss is a tensor of its graph. */
export interface OnnxAutoPlanRequest extends Omit<AutoPlanRequest, 'inputs' | 'target' | 'loss' | 'optimizer' | 'training'> {
  /** One sample's shape of each graph input (default: its declared shape without the first, batch, dimension). */
  readonly inputs?: readonly PlanInput[];
  /** The name of the graph's loss tensor (a model exported with its loss): the search plans training. */
  readonly loss?: string;
  /** For training: the optimizer by name (default `sgd`), or a function of the trained weights. */
  readonly optimizer?: OnnxPlanRequest['optimizer'];
  /** Its float weights and inputs in float16, as `model.half()` (see `OnnxPlanRequest.float16`). */
  readonly float16?: boolean;
}

/** What a search's state reads of either request. */
export type SearchRequest = Pick<AutoPlanRequest, 'ipus' | 'globalBatch' | 'space' | 'progress'>;
