/**
 * `autoPlan()`: the fastest configuration of a model that fits a number of
 * IPUs at a global batch size, found by planning candidates.
 *
 * The model is built and traced with shapes only once per micro-batch size
 * (twice for all of them when its graph is the same at every size but for
 * the numbers that follow the micro-batch: see `MicroBatchGraph`), and the
 * IR patterns run once per size; every candidate is then a compile
 * of that graph with other options: pipeline split, replication,
 * accumulation, device iterations, recomputation, optimizer-state place and
 * available-memory proportions.
 *
 * The search, for each number of IPUs a replica (fewest first):
 * 1. finds the largest micro-batch that fits with everything set to save
 *    memory (the most recomputation, the optimizer state off chip and
 *    sharded, the smallest memory proportion), trying each pipeline split
 *    (balanced by time, by memory, by both, and with a head that shares a
 *    weight with the first stage back on IPU 0);
 * 2. at that micro-batch and the next smaller one, keeps the fastest split,
 *    then, one choice at a time, moves recomputation and the optimizer state
 *    to the fastest setting that still fits;
 * 3. raises each IPU's memory proportion to the largest that fits it (the
 *    temporary memory of an IPU's kernels depends on its own proportion
 *    only, so one compile per proportion tells every IPU's);
 * then tries the best configuration with each number of device iterations.
 * Candidates are ranked by simulated throughput among those that fit.
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../common/errors.js';
import { getLogger } from '../common/log.js';
import { compilePlan, tracePlan, type PlanInput, type PlanOptimizerName, type PlanOptimizerTarget, type PlanTrace } from '../executor/model_plan.js';
import { applyPatterns, patternsFromSetting } from '../ir/patterns/patterns.js';
import type { Graph } from '../ir/graph.js';
import { writtenBuffers } from '../compile/buffer_broadcast.js';
import { targetSpec } from '../ipu/target_spec.js';
import { inferFloat16 } from '../precision/float16_inference.js';
import { Options } from '../options/options.js';
import type { OptionsSettings } from '../options/options_settings.js';
import { TensorLocationSettings } from '../option_vocabulary/tensor_location_settings.js';
import { PipelinedExecutionSpec } from '../strategy/staged_execution.js';
import { StageSpec } from '../strategy/stages_and_phases.js';
import type { RecomputationType } from '../strategy/recomputation.js';
import type { LossSpec } from '../trace/loss_function.js';
import type { Optimizer } from '../../optim/optimizer.js';
import type { PlanBuild } from '../executor/model_plan.js';
import { MicroBatchDerivationError, MicroBatchGraph } from './micro_batch_graph.js';
import { candidate, describeChoices, type Candidate, type CandidateChoices } from './search_candidate.js';
import { OptimizerStatePlace, resolveSpace, type ResolvedSpace, type SearchSpace } from './search_space.js';
import { searchReasons } from './search_reasons.js';
import { type SearchReportFiles, writeSearchReport } from './search_report.js';
import { stageSplits, unitCosts, type SplitBalance, type StageSplit, type UnitCost } from './stage_splits.js';
import { renamedUnits, unitGraph, type UnitGraph } from './split_units.js';

const log = getLogger('plan');

/** Throughputs closer than this (relative) are a tie: the configuration tried first stays. */
const TIE = 1e-3;

/** What {@link autoPlan} searches. */
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

/** What {@link autoPlan} found. */
export interface AutoPlan {
  /** The fastest configuration that fits; undefined when none does. */
  readonly best: Candidate | undefined;
  /** The configurations that fit, fastest first. */
  readonly candidates: readonly Candidate[];
  /** The configurations planned that do not fit. */
  readonly rejected: readonly Candidate[];
  /** Why the best wins: against the next best, and what kept it from being faster. */
  readonly why: string;
  /** Times the model was built and traced (once per micro-batch size its graph could not be derived for). */
  readonly traces: number;
  /** Seconds the search took. */
  readonly seconds: number;
  /** The search in words: the best configuration, why, and the ranked candidates. */
  summary(): string;
  /** Writes the search's report into `directory`: every candidate on a chart, why the best wins, and the best's own reports. */
  report(directory: string): SearchReportFiles;
}

/**
 * The index of the largest of `sizes` (ascending) at which `probe` fits, or
 * undefined if none does. Activations grow with the micro-batch and the rest
 * does not, so a probe that fits tells where the memory would run out: the
 * search starts at `start`, then jumps to the size its activations predict,
 * and steps from there.
 */
export async function largestFitting(sizes: readonly number[], start: number, probe: (index: number) => Promise<Candidate | undefined>): Promise<number | undefined> {
  let i = start;
  let c = await probe(i);
  while (!c?.fits) {
    if (i === 0) return undefined;
    c = await probe(--i);
  }
  const m = sizes[i]!;
  // Each IPU's room for activations over its activations per sample.
  const predicted = Math.min(
    ...c.plan.memory.ipus.map((use) => {
      const perSample = use.byKind.activations / m;
      return perSample > 0 ? m + (use.capacity - use.used) / perSample : Number.POSITIVE_INFINITY;
    }),
  );
  let j = i;
  while (j + 1 < sizes.length && sizes[j + 1]! <= predicted) j++;
  if (j === i) j = Math.min(i + 1, sizes.length - 1);
  if (j === i) return i;
  if ((await probe(j))?.fits) {
    while (j + 1 < sizes.length && (await probe(j + 1))?.fits) j++;
    return j;
  }
  for (let down = j - 1; down > i; down--) if ((await probe(down))?.fits) return down;
  return i;
}

function searchError(message: string): PoptfjsError {
  return new PoptfjsError(`autoPlan: ${message}`, { type: 'executor' });
}

/**
 * Refuses, before any candidate is planned, a search that would replicate a
 * model writing buffers (batch-norm statistics) while `broadcastBuffers` is
 * on: PopTorch refuses every such configuration, so the user chooses buffers
 * per replica or one replica.
 */
function checkReplicatedBuffers(graph: Graph, base: Options, space: ResolvedSpace, ipus: number): void {
  if (!base.settings.broadcastBuffers || graph.assignments.length === 0 || space.ipusPerReplica.every((k) => k === ipus)) return;
  const written = writtenBuffers(graph);
  throw searchError(
    `the model writes buffers (${written.slice(0, 3).join(', ')}${written.length > 3 ? `, ... ${written.length} in all` : ''}), which PopTorch does not broadcast between replicas; ` +
      `search with options: new Options().broadcastBuffers(false) to let each replica keep its own, or with space: { ipusPerReplica: [${ipus}] } for one replica`,
  );
}

/** The traced graph of one micro-batch size, with its units as blocks and the patterns applied. */
interface SearchGraph {
  readonly trace: PlanTrace;
  readonly units: UnitGraph;
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

/**
 * Searches the configurations of `build()`'s model on `request.ipus` IPUs at
 * `request.globalBatch` for the fastest that fits (see the module's doc for
 * how). Throws when the request is malformed; a model that fits in no
 * configuration gives `best: undefined` and the rejected candidates.
 */
// biome-ignore lint/complexity/noExcessiveCognitiveComplexity: the search's steps share the traces, costs and evaluated candidates they build as closures; to be split into a search state and its steps
export async function autoPlan(build: PlanBuild, request: AutoPlanRequest): Promise<AutoPlan> {
  const started = performance.now();
  if (typeof build !== 'function') throw searchError('expected a function that builds the model, e.g. () => tf.sequential({...})');
  if (request === null || typeof request !== 'object') throw searchError('expected { ipus, globalBatch, inputs, ... }');
  const { ipus, globalBatch } = request;
  if (!Number.isInteger(ipus) || ipus < 1) throw searchError(`ipus must be a positive integer, got ${JSON.stringify(ipus)}`);
  if (!Number.isInteger(globalBatch) || globalBatch < 1) throw searchError(`globalBatch must be a positive integer, got ${JSON.stringify(globalBatch)}`);
  if (!Array.isArray(request.inputs)) throw searchError('expected inputs: [{ shape, dtype? }], the shape of one sample each');
  const base = request.options ?? new Options();
  if (!(base instanceof Options)) throw searchError('options must be a poptfjs Options object');
  const training = request.training ?? (request.loss !== undefined || request.optimizer !== undefined || request.target !== undefined);
  const batched = (input: PlanInput | undefined, m: number, what: string): PlanInput | undefined => {
    if (input === undefined) return undefined;
    if (input === null || typeof input !== 'object' || !Array.isArray(input.shape))
      throw searchError(`${what} must be { shape: [...], dtype? }, got ${JSON.stringify(input)}`);
    return { ...input, shape: [m, ...input.shape] };
  };

  let traces = 0;
  const graphs = new Map<number, SearchGraph>();
  /** The last traced graph, and the graph at every size once two traces differ only in numbers that follow the micro-batch. */
  let anchor: { m: number; trace: PlanTrace } | undefined;
  let derivation: { graph: MicroBatchGraph; trace: PlanTrace } | undefined;
  const traceAt = async (m: number): Promise<PlanTrace> => {
    traces++;
    const trace = await tracePlan(build, {
      ...(request.optimizer !== undefined ? { optimizer: request.optimizer } : {}),
      ...(request.loss !== undefined ? { loss: request.loss } : {}),
      training,
      options: base,
      inputs: request.inputs.map((input, i) => batched(input, m, `inputs[${i}]`)!),
      ...(request.target !== undefined ? { target: batched(request.target, m, 'target')! } : {}),
    });
    if (!derivation && anchor) {
      try {
        derivation = { graph: new MicroBatchGraph(anchor.trace.graph, anchor.m, trace.graph, m), trace: anchor.trace };
      } catch (error) {
        if (!(error instanceof MicroBatchDerivationError)) throw error;
        log.debug(() => `autoPlan: micro-batch ${m} is traced, and the next size too: ${error.message}`);
      }
    }
    anchor = { m, trace };
    return trace;
  };
  /** The graph as traced at `m`: derived when two traces allow it, else traced. */
  const tracedAt = async (m: number): Promise<PlanTrace> => {
    if (derivation) {
      try {
        const graph = derivation.graph.at(m);
        const examples = derivation.trace.examples.map((e) => ({ ...e, shape: [m, ...e.shape.slice(1)] }));
        return { ...derivation.trace, graph, examples, microBatch: m };
      } catch (error) {
        if (!(error instanceof MicroBatchDerivationError)) throw error;
        log.debug(() => `autoPlan: micro-batch ${m} is traced: ${error.message}`);
      }
    }
    return traceAt(m);
  };
  const graphAt = async (m: number, sizes: readonly number[]): Promise<SearchGraph> => {
    const known = graphs.get(m);
    if (known) return known;
    const trace = await tracedAt(m);
    // The patterns, on the backend the compile runs on, as a plan of the model applies them (they may choose by size); then the units of what remains.
    const patterned = applyPatterns(trace.graph, patternsFromSetting(base.settings.patterns), { backend: tf.getBackend(), training }).graph;
    let units = unitGraph(patterned);
    // The model built again: layers tfjs named anew (dense_7 for dense_1) are the same layers, under the first trace's names.
    const names = [...graphs.values()][0]?.units.units;
    if (names && !units.blocks && units.units.length === names.length) units = renamedUnits(units, names);
    if (sizes.length > 0 && JSON.stringify(units.units) !== JSON.stringify(names ?? units.units)) {
      throw searchError(`the model's blocks or layers differ between micro-batch sizes (${sizes.join(', ')}); a search needs the same units at every size`);
    }
    const made = { trace: { ...trace, graph: units.graph }, units };
    graphs.set(m, made);
    return made;
  };

  // The units, from a first trace at the smallest micro-batch of the space.
  const firstSpace = resolveSpace(request.space, ipus, globalBatch, Number.MAX_SAFE_INTEGER, training);
  const firstGraph = await graphAt(firstSpace.microBatch[0]!, []);
  const unitCount = firstGraph.units.units.length;
  const space: ResolvedSpace = resolveSpace(request.space, ipus, globalBatch, unitCount, training);
  if (space.ipusPerReplica.length === 0) throw searchError(`no number of IPUs a replica divides ${ipus} and is at most the model's ${unitCount} unit(s)`);
  checkReplicatedBuffers(firstGraph.trace.graph, base, space, ipus);

  const evaluated = new Map<string, Candidate>();
  const spec = targetSpec(base.settings.ipuTarget);
  const halfPartials = base.settings.precision.partialsType === 'half';
  const costsAt = new Map<number, UnitCost[]>();
  const costsOf = (m: number, graph: SearchGraph): UnitCost[] => {
    let costs = costsAt.get(m);
    if (!costs) {
      const flagged = inferFloat16(graph.trace.graph, {
        params: graph.trace.float16.params,
        inputs: graph.trace.float16.inputs,
        casting: base.settings.precision.halfFloatCasting,
      });
      costs = unitCosts(flagged, graph.units.units, spec, halfPartials);
      costsAt.set(m, costs);
    }
    return costs;
  };
  const stateBytesPerWeightByte = training ? 2 + (firstGraph.trace.optimizer?.stateSlots().length ?? 0) : 0;

  const strategyOf = (split: StageSplit) => new PipelinedExecutionSpec(...split.stages.map((units, i) => new StageSpec(...units).ipu(split.ipus[i]!)));
  const optionsOf = (c: CandidateChoices, units: UnitGraph): Options => {
    const o = base.clone();
    o.replicationFactor(c.replicas).deviceIterations(c.deviceIterations);
    if (training) {
      o.Training.gradientAccumulation(c.gradientAccumulation);
      o.autoRecomputation(c.recomputation);
      o.TensorLocations.setOptimizerLocation(optimizerLocation(c.optimizerState));
    }
    o.setAvailableMemoryProportion(Object.fromEntries(c.availableMemoryProportion.map((p, ipu) => [`IPU${ipu}`, p])));
    // One IPU, and the model's own blocks asked for none other: no strategy is needed to say so.
    const ownIpus = [...units.blockIpus.values()].some((ipu) => ipu !== 0);
    if (c.ipusPerReplica > 1 || ownIpus) o.setExecutionStrategy(strategyOf(c.split));
    return o;
  };
  const keyOf = (c: CandidateChoices) =>
    JSON.stringify([c.ipusPerReplica, c.microBatch, c.deviceIterations, c.recomputation, c.optimizerState, c.availableMemoryProportion, c.split.stages, c.split.ipus]);
  const evaluate = async (c: CandidateChoices): Promise<Candidate> => {
    const key = keyOf(c);
    const known = evaluated.get(key);
    if (known) return known;
    const graph = await graphAt(c.microBatch, [...graphs.keys(), c.microBatch]);
    const options = optionsOf(c, graph.units);
    // The compile places the units as the split says, whether or not the printed options need a strategy to say it.
    const plan = compilePlan(graph.trace, options, undefined, { ...compileSettings(options), executionStrategy: strategyOf(c.split) });
    const result = candidate(c, options, plan);
    evaluated.set(key, result);
    request.progress?.(evaluated.size, `${result.fits ? 'fits' : 'does not fit'}, ${result.throughput.toFixed(1)} samples/s: ${describeChoices(c)}`);
    return result;
  };
  /** `b` fits and is faster than `a` by more than rounding (so, at a tie, the choice tried first stays). */
  const better = (a: Candidate | undefined, b: Candidate): boolean => b.fits && (!a?.fits || b.throughput > a.throughput * (1 + TIE));
  const leader = () => [...evaluated.values()].filter((c) => c.fits).reduce<Candidate | undefined>((best, c) => (better(best, c) ? c : best), undefined);

  const proportions = space.availableMemoryProportion;
  /** What the search knows of one number of IPUs a replica. */
  interface Replication {
    readonly k: number;
    readonly sizes: readonly number[];
    /** The largest size that fits with everything saving memory, as an index of `sizes`. */
    readonly largest: number;
    /** Its fastest split, saving memory. */
    readonly saving: Candidate;
  }
  const choicesOf = (
    k: number,
    m: number,
    split: StageSplit,
    s: { recomputation: RecomputationType; optimizerState: OptimizerStatePlace },
    amp: readonly number[],
  ): CandidateChoices => {
    const replicas = ipus / k;
    const minimum = training || k === 1 ? 1 : split.stages.length;
    const deviceIterations = space.deviceIterations.find((x) => x >= minimum) ?? minimum;
    const gradientAccumulation = training ? globalBatch / (m * replicas) : 1;
    return { ipusPerReplica: k, replicas, microBatch: m, gradientAccumulation, deviceIterations, ...s, availableMemoryProportion: amp, split };
  };
  const uniform = (k: number, p: number) => Array.from({ length: k }, () => p);
  const splitsAt = async (k: number, m: number): Promise<StageSplit[]> => {
    const graph = await graphAt(m, [...graphs.keys(), m]);
    return stageSplits(costsOf(m, graph), k, stateBytesPerWeightByte);
  };
  const savingSettings = (k: number) => {
    const recomputations = space.recomputation(k > 1);
    const states = space.optimizerState(ipus / k);
    return { recomputation: recomputations[recomputations.length - 1]!, optimizerState: states[states.length - 1]! };
  };
  const savingWith = (k: number, m: number, split: StageSplit) => evaluate(choicesOf(k, m, split, savingSettings(k), uniform(k, proportions[0]!)));
  /**
   * The fastest split at `m` saving memory, if one fits: the splits in the order of their balance of
   * time (the fastest first), the first that fits. `fitting`, a split that fits at `m`, tells how
   * much memory the splits' measures stand for: a split whose fullest IPU that predicts over its
   * capacity is not planned.
   */
  const fastestSaving = async (k: number, m: number, fitting?: Candidate): Promise<Candidate | undefined> => {
    const splits = await splitsAt(k, m);
    const order: SplitBalance[] = ['time', 'time and memory', 'memory'];
    const scale = fitting ? fitting.fullest.used / Math.max(...fitting.split.memory) : 0;
    const rank = (split: StageSplit) => Math.min(...split.balances.map((b) => order.indexOf(b)));
    for (const split of splits.sort((a, b) => rank(a) - rank(b))) {
      if (fitting && split !== fitting.split && scale * Math.max(...split.memory) > fitting.fullest.capacity) continue;
      const c = split === fitting?.split ? fitting : await savingWith(k, m, split);
      if (c.fits) return c;
    }
    return fitting;
  };

  // 1. For each number of IPUs a replica, the largest micro-batch that fits with everything saving memory
  //    (probed with the splits balanced by memory), and its fastest split.
  const replications: Replication[] = [];
  let previousSize: number = space.microBatch[0]!;
  for (const k of space.ipusPerReplica) {
    const replicas = ipus / k;
    // The accumulation a pipeline of k stages needs, and one more (a head back on IPU 0).
    const depth = k === 1 ? 1 : 2 * (k + 1) - 1;
    const sizes = space.microBatch.filter((m) => globalBatch % (m * replicas) === 0 && (!training || globalBatch / (m * replicas) >= depth));
    if (sizes.length === 0) {
      log.debug(() => `autoPlan: no micro-batch of the space divides ${globalBatch} over ${replicas} replica(s) with the accumulation a ${k}-IPU pipeline needs`);
      continue;
    }
    const probe = async (i: number): Promise<Candidate | undefined> => {
      const m = sizes[i]!;
      let last: Candidate | undefined;
      for (const split of (await splitsAt(k, m)).filter((s) => s.balances.includes('memory'))) {
        last = await savingWith(k, m, split);
        if (last.fits) return last;
      }
      return last;
    };
    const largest = await largestFitting(sizes, sizes.indexOf(sizes.filter((m) => m <= previousSize).at(-1) ?? sizes[0]!), probe);
    if (largest === undefined) continue;
    previousSize = sizes[largest]!;
    const saving = await fastestSaving(k, sizes[largest]!, await probe(largest));
    if (saving) replications.push({ k, sizes, largest, saving });
  }

  // 2. The most promising first (by the throughput of the fastest settings, fitting or not: none is faster):
  //    the fastest recomputation that fits, then the fastest place of the optimizer state that fits, then each
  //    IPU's largest memory proportion that fits, while larger ones are faster.
  const fastestSettings = (k: number) => ({ recomputation: space.recomputation(k > 1)[0]!, optimizerState: space.optimizerState(ipus / k)[0]! });
  const fastestWith = (c: Candidate) =>
    evaluate(choicesOf(c.ipusPerReplica, c.microBatch, c.split, fastestSettings(c.ipusPerReplica), uniform(c.ipusPerReplica, proportions[proportions.length - 1]!)));
  const bounds = new Map<Replication, number>();
  for (const r of replications) bounds.set(r, (await fastestWith(r.saving)).throughput);
  replications.sort((a, b) => bounds.get(b)! - bounds.get(a)!);
  for (const { k, sizes, largest, saving } of replications) {
    const recomputations = space.recomputation(k > 1);
    const states = space.optimizerState(ipus / k);
    const [fastestState] = states;
    const savingState = states[states.length - 1]!;
    const top = proportions[proportions.length - 1]!;
    for (const m of [sizes[largest]!, ...(largest > 0 ? [sizes[largest - 1]!] : [])]) {
      // The split found at the largest size serves the smaller one too.
      const at = (r: RecomputationType, state: OptimizerStatePlace, amp: readonly number[]) =>
        evaluate(choicesOf(k, m, saving.split, { recomputation: r, optimizerState: state }, amp));
      let current: Candidate | undefined;
      let blocked = false;
      let beaten = false;
      // Recomputation, fastest first: with the fastest state and proportion it bounds what this recomputation can give.
      for (const r of recomputations) {
        const bound = await at(r, fastestState!, uniform(k, top));
        const best = leader();
        if (best && !better(best, { ...bound, fits: true })) {
          beaten = true;
          break;
        }
        if (bound.fits) {
          current = bound;
          break;
        }
        const low = await at(r, savingState, uniform(k, proportions[0]!));
        if (low.fits) {
          current = low;
          break;
        }
        blocked = true;
      }
      if (beaten || !current) break;
      if (current.availableMemoryProportion[0] !== top) {
        // The optimizer state, fastest place that fits first; then each IPU's largest proportion that fits, while larger ones are faster.
        for (const state of states) {
          if (state === current.optimizerState) break;
          const c = await at(current.recomputation, state, current.availableMemoryProportion);
          if (better(current, c)) {
            current = c;
            break;
          }
        }
        const perIpu = uniform(k, proportions[0]!);
        let previous = current;
        for (const p of proportions.slice(1)) {
          const c = await at(current.recomputation, current.optimizerState, uniform(k, p));
          const fitting = c.plan.memory.ipus.filter((use) => use.used <= use.capacity);
          for (const use of fitting) perIpu[use.ipu] = p;
          if (fitting.length === 0 || c.throughput <= previous.throughput * (1 + TIE)) break;
          previous = c;
        }
        await at(current.recomputation, current.optimizerState, perIpu);
      }
      // A smaller micro-batch only helps when memory held back recomputation at this one.
      if (!blocked) break;
    }
  }
  const first = leader();
  if (first) {
    const minimum = training || first.ipusPerReplica === 1 ? 1 : first.split.stages.length;
    for (const d of space.deviceIterations) if (d >= minimum) await evaluate({ ...first, deviceIterations: d });
  }
  const candidates = [...evaluated.values()].filter((c) => c.fits).sort((a, b) => b.throughput - a.throughput);
  const rejected = [...evaluated.values()].filter((c) => !c.fits).sort((a, b) => a.fullest.used / a.fullest.capacity - b.fullest.used / b.fullest.capacity);
  const best = candidates[0];
  const why = searchReasons(best, candidates, rejected);
  const seconds = (performance.now() - started) / 1000;
  return {
    best,
    candidates,
    rejected,
    why,
    traces,
    seconds,
    report: (directory) => writeSearchReport(directory, { modelName: firstGraph.trace.name, ipus, globalBatch, best, candidates, rejected, why }),
    summary: () =>
      [
        `autoPlan: ${candidates.length} of ${evaluated.size} configuration(s) fit ${ipus} IPU(s) at a global batch of ${globalBatch} (${traces} trace(s), ${seconds.toFixed(1)} s)`,
        best ? `best: ${best.describe()}\n  ${best.plan.summary().split('\n')[0]}` : 'no configuration fits',
        why,
        ...(candidates.length > 0 ? ['ranked:', ...candidates.slice(0, 10).map((c, i) => `  ${i + 1}. ${c.throughput.toFixed(1)} samples/s: ${c.describe()}`)] : []),
      ].join('\n'),
  };
}
