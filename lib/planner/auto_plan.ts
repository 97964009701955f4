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
import { writtenBuffers } from '../compile/buffer_broadcast.js';
import { getLogger } from '../common/log.js';
import type { PlanBuild } from '../executor/model_plan.js';
import type { Graph } from '../ir/graph.js';
import { Options } from '../options/options.js';
import type { AutoPlanRequest, OnnxAutoPlanRequest, SearchRequest } from './auto_plan_request.js';
import type { Candidate } from './search_candidate.js';
import { searchReasons } from './search_reasons.js';
import { type SearchReportFiles, writeSearchReport } from './search_report.js';
import { SearchGraphs, searchError, type SearchTracer } from './search_graphs.js';
import { resolveSpace, type ResolvedSpace, type SearchSpace } from './search_space.js';
import { SearchState, TIE, better, uniform, type MemorySettings } from './search_state.js';
import { onnxTracer, tfjsTracer } from './search_tracers.js';
import { onnxModuleUnit } from './split_units.js';

const log = getLogger('plan');

export type { AutoPlanRequest, OnnxAutoPlanRequest } from './auto_plan_request.js';

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

/** What a search starts from: its tracer, base options and whether it trains, once the request's fields are checked. */
interface SearchSource {
  readonly tracer: SearchTracer;
  readonly base: Options;
  readonly training: boolean;
  /** The unit of a node's layer (ONNX models: its module; tfjs models: the layer). */
  readonly unitOfLayer?: (layer: string) => string;
  /** The space to search, when the model narrows the request's (an ONNX model that fixes its batch). */
  readonly space?: SearchSpace;
}

/** The fields of either request: the IPUs, the global batch and the base options. */
function checkCommon(request: AutoPlanRequest | OnnxAutoPlanRequest, expected: string): Options {
  if (request === null || typeof request !== 'object') throw searchError(`expected ${expected}`);
  const { ipus, globalBatch } = request;
  if (!Number.isInteger(ipus) || ipus < 1) throw searchError(`ipus must be a positive integer, got ${JSON.stringify(ipus)}`);
  if (!Number.isInteger(globalBatch) || globalBatch < 1) throw searchError(`globalBatch must be a positive integer, got ${JSON.stringify(globalBatch)}`);
  const base = request.options ?? new Options();
  if (!(base instanceof Options)) throw searchError('options must be a poptfjs Options object');
  return base;
}

/** A tfjs model's search: its inputs checked; it trains when asked, or given a loss, an optimizer or a target. */
function tfjsSource(build: PlanBuild, request: AutoPlanRequest): SearchSource {
  if (typeof build !== 'function') throw searchError('expected a function that builds the model, e.g. () => tf.sequential({...}), or an ONNX model (a path or its bytes)');
  const base = checkCommon(request, '{ ipus, globalBatch, inputs, ... }');
  if (!Array.isArray(request.inputs)) throw searchError('expected inputs: [{ shape, dtype? }], the shape of one sample each');
  const training = request.training ?? (request.loss !== undefined || request.optimizer !== undefined || request.target !== undefined);
  return { tracer: tfjsTracer(build, request, base, training), base, training };
}

/** An ONNX model's search: it trains when `loss` names its loss tensor; a target or `training` alone is refused. */
function onnxSource(source: string | Uint8Array, request: OnnxAutoPlanRequest): SearchSource {
  const base = checkCommon(request, '{ ipus, globalBatch, loss?, ... }');
  const fields = request as Partial<AutoPlanRequest>;
  if (fields.target !== undefined || (fields.training === true && request.loss === undefined))
    throw searchError('an ONNX model trains with the loss in its graph: give loss, the name of its loss tensor (a model exported with its loss), and no target');
  const { tracer, fixedBatch } = onnxTracer(source, request);
  const training = request.loss !== undefined;
  if (fixedBatch === undefined) return { tracer, base, training, unitOfLayer: onnxModuleUnit };
  // Exported without a dynamic batch axis: its reshapes may hold the batch, so every candidate runs micro-batches of it.
  const asked = request.space?.microBatch;
  if (asked !== undefined && (asked.length !== 1 || asked[0] !== fixedBatch))
    throw searchError(
      `the model's inputs fix the batch at ${fixedBatch} (it was exported without a dynamic batch axis): search microBatch [${fixedBatch}], or export it with one`,
    );
  return { tracer, base, training, unitOfLayer: onnxModuleUnit, space: { ...request.space, microBatch: [fixedBatch] } };
}

/**
 * Step 0, trace once: the model traced at the smallest micro-batch of the space gives its units, which
 * bound the IPUs a replica; the space resolved with them, and the search's state.
 */
async function startSearch(source: SearchSource, request: SearchRequest): Promise<SearchState> {
  const { base, training } = source;
  const { ipus, globalBatch } = request;
  const graphs = new SearchGraphs(source.tracer, base, training, source.unitOfLayer);
  const firstSpace = resolveSpace(source.space ?? request.space, ipus, globalBatch, Number.MAX_SAFE_INTEGER, training);
  const first = await graphs.at(firstSpace.microBatch[0]!);
  const unitCount = first.units.units.length;
  const space = resolveSpace(source.space ?? request.space, ipus, globalBatch, unitCount, training);
  if (space.ipusPerReplica.length === 0) throw searchError(`no number of IPUs a replica divides ${ipus} and is at most the model's ${unitCount} unit(s)`);
  checkReplicatedBuffers(first.trace.graph, base, space, ipus);
  return new SearchState(request, base, training, space, graphs);
}

/** What the search knows of one number of IPUs a replica. */
interface Replication {
  readonly k: number;
  readonly sizes: readonly number[];
  /** The largest size that fits with everything saving memory, as an index of `sizes`. */
  readonly largest: number;
  /** Its fastest split, saving memory. */
  readonly saving: Candidate;
}

/** Step 1, enumerate the space: the micro-batch sizes `k` IPUs a replica allow, with the accumulation a `k`-stage pipeline needs. */
function sizesOf(state: SearchState, k: number): number[] {
  const { ipus, globalBatch, training } = state;
  const replicas = ipus / k;
  // The accumulation a pipeline of k stages needs, and one more (a head back on IPU 0).
  const depth = k === 1 ? 1 : 2 * (k + 1) - 1;
  const sizes = state.space.microBatch.filter((m) => globalBatch % (m * replicas) === 0 && (!training || globalBatch / (m * replicas) >= depth));
  if (sizes.length === 0) {
    log.debug(() => `autoPlan: no micro-batch of the space divides ${globalBatch} over ${replicas} replica(s) with the accumulation a ${k}-IPU pipeline needs`);
  }
  return sizes;
}

/**
 * Step 2, plan the replications: for each number of IPUs a replica, the largest micro-batch that fits
 * with everything saving memory (probed with the splits balanced by memory), and its fastest split.
 */
async function replications(state: SearchState): Promise<Replication[]> {
  const found: Replication[] = [];
  let previousSize: number = state.space.microBatch[0]!;
  for (const k of state.space.ipusPerReplica) {
    const sizes = sizesOf(state, k);
    if (sizes.length === 0) continue;
    const probe = async (i: number): Promise<Candidate | undefined> => {
      let last: Candidate | undefined;
      for (const split of (await state.splitsAt(k, sizes[i]!)).filter((s) => s.balances.includes('memory'))) {
        last = await state.savingWith(k, sizes[i]!, split);
        if (last.fits) return last;
      }
      return last;
    };
    const largest = await largestFitting(sizes, sizes.indexOf(sizes.filter((m) => m <= previousSize).at(-1) ?? sizes[0]!), probe);
    if (largest === undefined) continue;
    previousSize = sizes[largest]!;
    const saving = await state.fastestSaving(k, sizes[largest]!, await probe(largest));
    if (saving) found.push({ k, sizes, largest, saving });
  }
  return found;
}

/**
 * The replications, the most promising first: by the throughput of their fastest settings, fitting or
 * not (none of their configurations is faster).
 */
async function mostPromisingFirst(state: SearchState, found: readonly Replication[]): Promise<Replication[]> {
  const top = state.proportions[state.proportions.length - 1]!;
  const bounds = new Map<Replication, number>();
  for (const r of found) {
    const c = r.saving;
    bounds.set(
      r,
      (await state.evaluate(state.choicesOf(c.ipusPerReplica, c.microBatch, c.split, state.fastestSettings(c.ipusPerReplica), uniform(c.ipusPerReplica, top)))).throughput,
    );
  }
  return [...found].sort((a, b) => bounds.get(b)! - bounds.get(a)!);
}

/** A candidate of replication `r` at micro-batch `m` with its split saving memory, and these settings and proportions. */
type CandidateAt = (settings: MemorySettings, amp: readonly number[]) => Promise<Candidate>;

/**
 * The fastest recomputation that fits at a micro-batch, fastest first: with the fastest optimizer-state
 * place and proportion it bounds what that recomputation can give, and with the saving ones it tells
 * whether it fits at all. `beaten` when a bound is no faster than the leader; `blocked` when memory held
 * back a faster recomputation.
 */
async function fastestRecomputation(state: SearchState, k: number, at: CandidateAt): Promise<{ current?: Candidate; blocked: boolean; beaten: boolean }> {
  const states = state.space.optimizerState(state.ipus / k);
  const top = state.proportions[state.proportions.length - 1]!;
  let blocked = false;
  for (const recomputation of state.space.recomputation(k > 1)) {
    const bound = await at({ recomputation, optimizerState: states[0]! }, uniform(k, top));
    const best = state.leader();
    if (best && !better(best, { ...bound, fits: true })) return { blocked, beaten: true };
    if (bound.fits) return { current: bound, blocked, beaten: false };
    const low = await at({ recomputation, optimizerState: states[states.length - 1]! }, uniform(k, state.proportions[0]!));
    if (low.fits) return { current: low, blocked, beaten: false };
    blocked = true;
  }
  return { blocked, beaten: false };
}

/**
 * From `current`, the fastest optimizer-state place that fits; then each IPU's largest proportion that
 * fits, while larger ones are faster (the temporary memory of an IPU's kernels depends on its own
 * proportion only, so one compile per proportion tells every IPU's).
 */
async function fastestPlaceAndProportions(state: SearchState, k: number, at: CandidateAt, fitting: Candidate): Promise<void> {
  let current = fitting;
  for (const place of state.space.optimizerState(state.ipus / k)) {
    if (place === current.optimizerState) break;
    const c = await at({ recomputation: current.recomputation, optimizerState: place }, current.availableMemoryProportion);
    if (better(current, c)) {
      current = c;
      break;
    }
  }
  const settings = { recomputation: current.recomputation, optimizerState: current.optimizerState };
  const perIpu = uniform(k, state.proportions[0]!);
  let previous = current;
  for (const p of state.proportions.slice(1)) {
    const c = await at(settings, uniform(k, p));
    const fitting = c.plan.memory.ipus.filter((use) => use.used <= use.capacity);
    for (const use of fitting) perIpu[use.ipu] = p;
    if (fitting.length === 0 || c.throughput <= previous.throughput * (1 + TIE)) break;
    previous = c;
  }
  await at(settings, perIpu);
}

/**
 * Step 3, plan the candidates of a replication: at its largest micro-batch, and at the next smaller one
 * only when memory held back recomputation, the fastest recomputation that fits, then the fastest
 * place of the optimizer state and each IPU's largest memory proportion.
 */
async function tuneReplication(state: SearchState, { k, sizes, largest, saving }: Replication): Promise<void> {
  const top = state.proportions[state.proportions.length - 1]!;
  for (const m of [sizes[largest]!, ...(largest > 0 ? [sizes[largest - 1]!] : [])]) {
    // The split found at the largest size serves the smaller one too.
    const at: CandidateAt = (settings, amp) => state.evaluate(state.choicesOf(k, m, saving.split, settings, amp));
    const { current, blocked, beaten } = await fastestRecomputation(state, k, at);
    if (beaten || !current) break;
    if (current.availableMemoryProportion[0] !== top) await fastestPlaceAndProportions(state, k, at, current);
    // A smaller micro-batch only helps when memory held back recomputation at this one.
    if (!blocked) break;
  }
}

/** Step 4: the leader with each number of device iterations of the space its pipeline allows. */
async function tryDeviceIterations(state: SearchState): Promise<void> {
  const first = state.leader();
  if (!first) return;
  const minimum = state.training || first.ipusPerReplica === 1 ? 1 : first.split.stages.length;
  for (const d of state.space.deviceIterations) if (d >= minimum) await state.evaluate({ ...first, deviceIterations: d });
}

/** Step 5, rank and explain: the candidates that fit, fastest first, those that do not, and why the best wins. */
function searchResult(state: SearchState, seconds: number): AutoPlan {
  const { ipus, globalBatch, evaluated } = state;
  const traces = state.graphs.traces;
  const candidates = [...evaluated.values()].filter((c) => c.fits).sort((a, b) => b.throughput - a.throughput);
  const rejected = [...evaluated.values()].filter((c) => !c.fits).sort((a, b) => a.fullest.used / a.fullest.capacity - b.fullest.used / b.fullest.capacity);
  const best = candidates[0];
  const why = searchReasons(best, candidates, rejected);
  const modelName = state.graphs.first!.trace.name;
  return {
    best,
    candidates,
    rejected,
    why,
    traces,
    seconds,
    report: (directory) => writeSearchReport(directory, { modelName, ipus, globalBatch, best, candidates, rejected, why }),
    summary: () =>
      [
        `autoPlan: ${candidates.length} of ${evaluated.size} configuration(s) fit ${ipus} IPU(s) at a global batch of ${globalBatch} (${traces} trace(s), ${seconds.toFixed(1)} s)`,
        best ? `best: ${best.describe()}\n  ${best.plan.summary().split('\n')[0]}` : 'no configuration fits',
        why,
        ...(candidates.length > 0 ? ['ranked:', ...candidates.slice(0, 10).map((c, i) => `  ${i + 1}. ${c.throughput.toFixed(1)} samples/s: ${c.describe()}`)] : []),
      ].join('\n'),
  };
}

/**
 * Searches the configurations of `build()`'s model on `request.ipus` IPUs at
 * `request.globalBatch` for the fastest that fits (see the module's doc for
 * how). Throws when the request is malformed; a model that fits in no
 * configuration gives `best: undefined` and the rejected candidates.
 */
export function autoPlan(build: PlanBuild, request: AutoPlanRequest): Promise<AutoPlan>;
/**
 * The same search for the ONNX model at `model` (a path, or its bytes),
 * imported at each micro-batch without reading its weights; its units are
 * the modules its nodes are named after (`onnxModuleUnit`). See
 * {@link OnnxAutoPlanRequest}.
 */
export function autoPlan(model: string | Uint8Array, request: OnnxAutoPlanRequest): Promise<AutoPlan>;
export async function autoPlan(source: PlanBuild | string | Uint8Array, request: AutoPlanRequest | OnnxAutoPlanRequest): Promise<AutoPlan> {
  const started = performance.now();
  const searched =
    typeof source === 'string' || source instanceof Uint8Array ? onnxSource(source, request as OnnxAutoPlanRequest) : tfjsSource(source, request as AutoPlanRequest);
  const state = await startSearch(searched, request);
  for (const replication of await mostPromisingFirst(state, await replications(state))) await tuneReplication(state, replication);
  await tryDeviceIterations(state);
  return searchResult(state, (performance.now() - started) / 1000);
}
