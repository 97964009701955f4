/**
 * One configuration a search tried: its choices, the `Options` that say them
 * (printable as a config file of PopTorch's form), and its plan.
 */
import type { Plan } from '../executor/model_plan.js';
import type { IpuMemoryUse } from '../ipu/memory_plan.js';
import { optionsConfigText } from '../options/config_text.js';
import type { Options } from '../options/options.js';
import { fullestIpu } from '../report/plan_summary.js';
import type { RecomputationType } from '../strategy/recomputation.js';
import type { OptimizerStatePlace } from './search_space.js';
import type { StageSplit } from './stage_splits.js';

/** The choices of one configuration. */
export interface CandidateChoices {
  readonly ipusPerReplica: number;
  readonly replicas: number;
  readonly microBatch: number;
  /** Micro-batches a replica accumulates per weight update (1 in inference). */
  readonly gradientAccumulation: number;
  readonly deviceIterations: number;
  readonly recomputation: RecomputationType;
  readonly optimizerState: OptimizerStatePlace;
  /** The available-memory proportion of each IPU of a replica. */
  readonly availableMemoryProportion: readonly number[];
  /** The units of each pipeline stage and its IPU. */
  readonly split: StageSplit;
}

/** A configuration a search compiled, and what it gives. */
export interface Candidate extends CandidateChoices {
  /** The options of the configuration (with the search's base options). */
  readonly options: Options;
  /** The plan of the configuration. */
  readonly plan: Plan;
  /** Whether it fits. */
  readonly fits: boolean;
  /** Samples per second over all replicas. */
  readonly throughput: number;
  /** The IPU whose memory is fullest. */
  readonly fullest: IpuMemoryUse;
  /** The options as a config file of PopTorch's form (`Options.loadFromFile` reads it back). */
  configText(): string;
  /** The choices in one line. */
  describe(): string;
}

/** The choices in one line: `4 IPUs × 4 replicas, micro-batch 8, accumulation 510, ...`. */
export function describeChoices(c: CandidateChoices): string {
  const split = c.ipusPerReplica === 1 ? '' : `, stages [${c.split.stages.map((s) => s.length).join(',')}]${c.split.sharedWeightOnFirstIpu ? ' (last on IPU 0)' : ''}`;
  const amp = [...new Set(c.availableMemoryProportion)];
  return (
    `${c.ipusPerReplica} IPU(s) × ${c.replicas} replica(s)${split}, micro-batch ${c.microBatch}, accumulation ${c.gradientAccumulation}, ` +
    `${c.deviceIterations} device iteration(s), recomputation ${c.recomputation}, optimizer state ${c.optimizerState}, ` +
    `memory proportion ${amp.length === 1 ? amp[0] : `[${c.availableMemoryProportion.join(', ')}]`}`
  );
}

/** A candidate of `choices` with `options`, planned as `plan`. */
export function candidate(choices: CandidateChoices, options: Options, plan: Plan): Candidate {
  return {
    ...choices,
    options,
    plan,
    fits: plan.fits,
    throughput: plan.throughput,
    fullest: fullestIpu(plan.memory),
    configText: () => optionsConfigText(options),
    describe: () => describeChoices(choices),
  };
}
