/**
 * What a search knows as it goes: the problem (IPUs, global batch, the base
 * options, the space), the graphs of the model, the costs of its units, and
 * every candidate planned, each compiled once. The search's steps
 * (`auto_plan.ts`) ask it for candidates by their choices.
 */
import { compilePlan } from '../executor/model_plan.js';
import { targetSpec, type IpuTargetSpec } from '../ipu/target_spec.js';
import type { Options } from '../options/options.js';
import type { OptionsSettings } from '../options/options_settings.js';
import { TensorLocationSettings } from '../option_vocabulary/tensor_location_settings.js';
import { inferFloat16 } from '../precision/float16_inference.js';
import { PipelinedExecutionSpec } from '../strategy/staged_execution.js';
import { StageSpec } from '../strategy/stages_and_phases.js';
import type { RecomputationType } from '../strategy/recomputation.js';
import type { SearchRequest } from './auto_plan_request.js';
import { candidate, describeChoices, type Candidate, type CandidateChoices } from './search_candidate.js';
import type { SearchGraph, SearchGraphs } from './search_graphs.js';
import { OptimizerStatePlace, type ResolvedSpace } from './search_space.js';
import { stageSplits, unitCosts, type SplitBalance, type StageSplit, type UnitCost } from './stage_splits.js';
import type { UnitGraph } from './split_units.js';

/** Throughputs closer than this (relative) are a tie: the configuration tried first stays. */
export const TIE = 1e-3;

/** The recomputation and optimizer-state place of a candidate. */
export interface MemorySettings {
  readonly recomputation: RecomputationType;
  readonly optimizerState: OptimizerStatePlace;
}

/** The options a candidate's compile reads: its own, with the patterns already applied to its graph. */
function compileSettings(options: Options): OptionsSettings {
  return { ...options.settings, patterns: { level: 'NoPatterns', overrides: {} } };
}

function optimizerLocation(place: OptimizerStatePlace): TensorLocationSettings {
  return new TensorLocationSettings()
    .useOnChipStorage(place === OptimizerStatePlace.OnChip || place === OptimizerStatePlace.OnChipSharded)
    .useReplicatedTensorSharding(place === OptimizerStatePlace.OnChipSharded || place === OptimizerStatePlace.OffChipSharded);
}

function strategyOf(split: StageSplit): PipelinedExecutionSpec {
  return new PipelinedExecutionSpec(...split.stages.map((units, i) => new StageSpec(...units).ipu(split.ipus[i]!)));
}

function keyOf(c: CandidateChoices): string {
  return JSON.stringify([c.ipusPerReplica, c.microBatch, c.deviceIterations, c.recomputation, c.optimizerState, c.availableMemoryProportion, c.split.stages, c.split.ipus]);
}

/** `b` fits and is faster than `a` by more than rounding (so, at a tie, the choice tried first stays). */
export function better(a: Candidate | undefined, b: Candidate): boolean {
  return b.fits && (!a?.fits || b.throughput > a.throughput * (1 + TIE));
}

/** `k` IPUs, each at proportion `p`. */
export function uniform(k: number, p: number): number[] {
  return Array.from({ length: k }, () => p);
}

/** A search's problem, graphs and planned candidates. */
export class SearchState {
  /** Every candidate planned, by its choices. */
  readonly evaluated = new Map<string, Candidate>();
  readonly ipus: number;
  readonly globalBatch: number;
  /** The available-memory proportions of the space, ascending. */
  readonly proportions: readonly number[];
  readonly #spec: IpuTargetSpec;
  readonly #costs = new Map<number, UnitCost[]>();
  /** Bytes of weights and optimizer state per byte of weights, for the splits' memory balance. */
  readonly #stateBytesPerWeightByte: number;

  constructor(
    readonly request: SearchRequest,
    readonly base: Options,
    readonly training: boolean,
    readonly space: ResolvedSpace,
    readonly graphs: SearchGraphs,
  ) {
    this.ipus = request.ipus;
    this.globalBatch = request.globalBatch;
    this.proportions = space.availableMemoryProportion;
    this.#spec = targetSpec(base.settings.ipuTarget);
    this.#stateBytesPerWeightByte = training ? 2 + (graphs.first?.trace.optimizer?.stateSlots().length ?? 0) : 0;
  }

  /** The candidate of `c`, planned once. */
  async evaluate(c: CandidateChoices): Promise<Candidate> {
    const key = keyOf(c);
    const known = this.evaluated.get(key);
    if (known) return known;
    const graph = await this.graphs.at(c.microBatch);
    const options = this.#optionsOf(c, graph.units);
    // The compile places the units as the split says, whether or not the printed options need a strategy to say it.
    const plan = compilePlan(graph.trace, options, undefined, { ...compileSettings(options), executionStrategy: strategyOf(c.split) });
    const result = candidate(c, options, plan);
    this.evaluated.set(key, result);
    this.request.progress?.(this.evaluated.size, `${result.fits ? 'fits' : 'does not fit'}, ${result.throughput.toFixed(1)} samples/s: ${describeChoices(c)}`);
    return result;
  }

  /** The fastest candidate that fits so far. */
  leader(): Candidate | undefined {
    return [...this.evaluated.values()].filter((c) => c.fits).reduce<Candidate | undefined>((best, c) => (better(best, c) ? c : best), undefined);
  }

  /** The choices of `k` IPUs a replica at micro-batch `m`, with the first device iterations the space allows. */
  choicesOf(k: number, m: number, split: StageSplit, s: MemorySettings, amp: readonly number[]): CandidateChoices {
    const replicas = this.ipus / k;
    const minimum = this.training || k === 1 ? 1 : split.stages.length;
    const deviceIterations = this.space.deviceIterations.find((x) => x >= minimum) ?? minimum;
    const gradientAccumulation = this.training ? this.globalBatch / (m * replicas) : 1;
    return { ipusPerReplica: k, replicas, microBatch: m, gradientAccumulation, deviceIterations, ...s, availableMemoryProportion: amp, split };
  }

  /** The settings that save the most memory with `k` IPUs a replica: the most recomputation, the optimizer state's most saving place. */
  savingSettings(k: number): MemorySettings {
    const recomputations = this.space.recomputation(k > 1);
    const states = this.space.optimizerState(this.ipus / k);
    return { recomputation: recomputations[recomputations.length - 1]!, optimizerState: states[states.length - 1]! };
  }

  /** The fastest settings with `k` IPUs a replica. */
  fastestSettings(k: number): MemorySettings {
    return { recomputation: this.space.recomputation(k > 1)[0]!, optimizerState: this.space.optimizerState(this.ipus / k)[0]! };
  }

  /** The candidate of `split` at `m` saving memory: the saving settings and the smallest proportion. */
  savingWith(k: number, m: number, split: StageSplit): Promise<Candidate> {
    return this.evaluate(this.choicesOf(k, m, split, this.savingSettings(k), uniform(k, this.proportions[0]!)));
  }

  /** The pipeline splits of the units over `k` IPUs at micro-batch `m`. */
  async splitsAt(k: number, m: number): Promise<StageSplit[]> {
    return stageSplits(this.#costsOf(m, await this.graphs.at(m)), k, this.#stateBytesPerWeightByte);
  }

  /**
   * The fastest split at `m` saving memory, if one fits: the splits in the order of their balance of
   * time (the fastest first), the first that fits. `fitting`, a split that fits at `m`, tells how
   * much memory the splits' measures stand for: a split whose fullest IPU that predicts over its
   * capacity is not planned.
   */
  async fastestSaving(k: number, m: number, fitting?: Candidate): Promise<Candidate | undefined> {
    const splits = await this.splitsAt(k, m);
    const order: SplitBalance[] = ['time', 'time and memory', 'memory'];
    const scale = fitting ? fitting.fullest.used / Math.max(...fitting.split.memory) : 0;
    const rank = (split: StageSplit) => Math.min(...split.balances.map((b) => order.indexOf(b)));
    for (const split of splits.sort((a, b) => rank(a) - rank(b))) {
      if (fitting && split !== fitting.split && scale * Math.max(...split.memory) > fitting.fullest.capacity) continue;
      const c = split === fitting?.split ? fitting : await this.savingWith(k, m, split);
      if (c.fits) return c;
    }
    return fitting;
  }

  #costsOf(m: number, graph: SearchGraph): UnitCost[] {
    let costs = this.#costs.get(m);
    if (!costs) {
      const flagged = inferFloat16(graph.trace.graph, {
        params: graph.trace.float16.params,
        inputs: graph.trace.float16.inputs,
        casting: this.base.settings.precision.halfFloatCasting,
      });
      costs = unitCosts(flagged, graph.units.units, this.#spec, this.base.settings.precision.partialsType === 'half');
      this.#costs.set(m, costs);
    }
    return costs;
  }

  #optionsOf(c: CandidateChoices, units: UnitGraph): Options {
    const o = this.base.clone();
    o.replicationFactor(c.replicas).deviceIterations(c.deviceIterations);
    if (this.training) {
      o.Training.gradientAccumulation(c.gradientAccumulation);
      o.autoRecomputation(c.recomputation);
      o.TensorLocations.setOptimizerLocation(optimizerLocation(c.optimizerState));
    }
    o.setAvailableMemoryProportion(Object.fromEntries(c.availableMemoryProportion.map((p, ipu) => [`IPU${ipu}`, p])));
    // One IPU, and the model's own blocks asked for none other: no strategy is needed to say so.
    const ownIpus = [...units.blockIpus.values()].some((ipu) => ipu !== 0);
    if (c.ipusPerReplica > 1 || ownIpus) o.setExecutionStrategy(strategyOf(c.split));
    return o;
  }
}
