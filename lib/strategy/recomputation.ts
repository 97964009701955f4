/**
 * Recomputation: which forward activations the backward pass of a training
 * step recomputes from stored ones instead of keeping them from the forward
 * pass, and which forward nodes each backward unit runs again to do so.
 *
 * The simulated engine computes every value once (recomputing gives the same
 * numbers); the memory plan and the timeline charge what recomputation would
 * cost on the device: the recomputed activations are not held between the
 * forward and the backward pass of a micro-batch, and each backward unit
 * first re-runs the forward nodes that make them.
 *
 * Always stored: graph inputs, weights and values made from weights only,
 * values that cross from one stage to another (a stage can only recompute
 * from what it holds), and the outputs of recomputation checkpoints
 * (`ops.recomputationCheckpoint`). Beyond those, per type:
 * - `None`: everything is stored;
 * - `Standard`: on a stage without checkpoints, every ⌈√n⌉-th of the n
 *   activations its backward pass reads is stored, in forward order (√n
 *   checkpointing: about √n stored values and √n-value segments to recompute);
 * - `NormOnly`: only the outputs of normalisations are recomputed;
 * - `Pipeline` and `RecomputeAll`: everything else is recomputed, so a stage
 *   stores its inputs and its checkpoints only; under `Pipeline`, the stage
 *   that computes the loss also stores what it runs after its last
 *   checkpoints, as PopART does (its forward and backward passes run back to
 *   back).
 *
 * Whatever the type, a dropout mask its stage makes is never stored: the
 * backward pass draws it again, as PopART's DropoutGrad op does from the seed
 * (lib/ir/dropout_masks.ts).
 */
import { PoptfjsError } from '../common/errors.js';
import { readersOfValues, type Graph, type Node, type NodeId, type ValueId } from '../ir/graph.js';
import { dropoutMaskValues } from '../ir/dropout_masks.js';
import { isViewNode } from '../ir/value_views.js';
import { weightDerivedValues } from '../ir/weight_derived_values.js';
import type { Placement } from './placement.js';

/** Which activations are recomputed in the backward pass instead of stored (PopART's `RecomputationType`). */
export const RecomputationType = {
  /** Nothing is recomputed. */
  None: 'None',
  /** √n checkpointing per stage, or the stage's own checkpoints where it has some. */
  Standard: 'Standard',
  /** Normalisations are recomputed. */
  NormOnly: 'NormOnly',
  /** Everything but pipeline stage inputs and checkpoints is recomputed. */
  Pipeline: 'Pipeline',
  /** Everything but stage inputs and checkpoints is recomputed. */
  RecomputeAll: 'RecomputeAll',
} as const;
/** A member of {@link RecomputationType}. */
export type RecomputationType = (typeof RecomputationType)[keyof typeof RecomputationType];

/** What a training step recomputes. */
export interface RecomputationPlan {
  /** Forward values the backward pass reads from a recomputed copy. */
  readonly recomputed: ReadonlySet<ValueId>;
  /** Forward nodes each backward unit re-runs first, in graph order, by unit index. */
  readonly unitNodes: ReadonlyMap<number, readonly NodeId[]>;
}

/** Kernels whose outputs `NormOnly` recomputes. */
const NORMALISATION_KERNEL = /BatchNorm|LayerNorm|GroupNorm|InstanceNorm|LRN/;

/** Where the values of a graph come from, as the plan asks it. */
interface ValueOrigins {
  /** The stage a node runs in. */
  readonly stageOf: (node: NodeId) => number;
  /** The node that makes a value (none for graph inputs and weights). */
  readonly producer: (id: ValueId) => Node | undefined;
  /** Whether a value is made by the forward pass from more than the weights (so it could be recomputed). */
  readonly forwardValue: (id: ValueId) => boolean;
}

function valueOrigins(graph: Graph, placement: Placement): ValueOrigins {
  const stageOf = (node: NodeId) => placement.nodeStages[node]!;
  const producer = (id: ValueId): Node | undefined => {
    const source = graph.values[id]!.source;
    return source.kind === 'node' ? graph.nodes[source.node] : undefined;
  };
  const perStep = weightDerivedValues(graph);
  const forwardValue = (id: ValueId) => {
    const node = producer(id);
    return node !== undefined && node.annotations.pass === 'forward' && !perStep[id];
  };
  return { stageOf, producer, forwardValue };
}

/** The values stored whatever the type: stage inputs and checkpoint outputs. */
function alwaysStored(graph: Graph, origins: ValueOrigins): Set<ValueId> {
  const stored = new Set<ValueId>();
  for (const node of graph.nodes) {
    if (node.annotations.checkpoint) node.outputs.forEach((id) => stored.add(id));
    for (const id of node.inputs) {
      const made = origins.producer(id);
      if (made && origins.stageOf(made.id) !== origins.stageOf(node.id)) stored.add(id);
    }
  }
  return stored;
}

/** The forward values the backward pass reads. */
function backwardReads(graph: Graph): ValueId[] {
  return graph.nodes.flatMap((node) => (node.annotations.pass === 'backward' ? node.inputs : []));
}

/** `Standard`: on each stage without checkpoints, every ⌈√n⌉-th of the n activations (not views) its backward pass reads, in forward order. */
function storeSquareRootCheckpoints(graph: Graph, origins: ValueOrigins, stored: Set<ValueId>): void {
  const byStage = new Map<number, ValueId[]>();
  for (const id of [...new Set(backwardReads(graph))].sort((a, b) => a - b)) {
    const node = origins.producer(id);
    if (!node || !origins.forwardValue(id) || isViewNode(graph, node)) continue;
    const stage = origins.stageOf(node.id);
    byStage.set(stage, [...(byStage.get(stage) ?? []), id]);
  }
  const checkpointed = new Set(graph.nodes.filter((n) => n.annotations.checkpoint).map((n) => origins.stageOf(n.id)));
  for (const [stage, values] of byStage) {
    if (checkpointed.has(stage)) continue;
    const every = Math.ceil(Math.sqrt(values.length));
    values.forEach((id, i) => (i + 1) % every === 0 && stored.add(id));
  }
}

/** Adds to `stored` what `type` stores beyond the stage inputs and checkpoints; an unknown type is an error. */
function storeForType(graph: Graph, origins: ValueOrigins, type: RecomputationType, stored: Set<ValueId>): void {
  if (type === 'Standard') storeSquareRootCheckpoints(graph, origins, stored);
  else if (type === 'NormOnly') {
    for (const node of graph.nodes) if (node.annotations.pass === 'forward' && !NORMALISATION_KERNEL.test(node.kernel)) node.outputs.forEach((id) => stored.add(id));
  } else if (type !== 'Pipeline' && type !== 'RecomputeAll') {
    throw new PoptfjsError(`unknown recomputation type '${String(type)}'; expected one of ${Object.values(RecomputationType).join(', ')}`, { type: 'options' });
  }
}

/** From the forward values the backward pass reads, back through what is not stored: the values recomputed and the nodes re-run. */
function walkBackFromReads(graph: Graph, origins: ValueOrigins, isStored: (id: ValueId) => boolean): { recomputed: Set<ValueId>; rerun: Set<NodeId> } {
  const recomputed = new Set<ValueId>();
  const rerun = new Set<NodeId>();
  const pending = backwardReads(graph);
  while (pending.length > 0) {
    const id = pending.pop()!;
    if (recomputed.has(id) || isStored(id) || !origins.forwardValue(id)) continue;
    recomputed.add(id);
    const node = origins.producer(id)!;
    if (!rerun.has(node.id)) {
      rerun.add(node.id);
      pending.push(...node.inputs);
    }
  }
  return { recomputed, rerun };
}

/** The re-run nodes by the backward unit that runs them first, in graph order. */
function rerunByUnit(placement: Placement, origins: ValueOrigins, rerun: ReadonlySet<NodeId>): Map<number, NodeId[]> {
  const unitNodes = new Map<number, NodeId[]>();
  for (const id of [...rerun].sort((a, b) => a - b)) {
    // A re-run node feeds a backward node of its own stage (stage inputs are stored), so its stage has a backward unit.
    const unit = placement.units.findIndex((u) => u.pass === 'backward' && u.stages.includes(origins.stageOf(id)));
    unitNodes.set(unit, [...(unitNodes.get(unit) ?? []), id]);
  }
  return unitNodes;
}

/**
 * PopART's rule for the stage that computes the loss under `Pipeline`
 * (willow/src/transforms/pipeline.cpp, `Pipeline::setFinalFwdStageRecomputation`):
 * its forward and backward passes run back to back in one pipeline cycle, so
 * what its forward pass runs after its last checkpoints is stored, not
 * recomputed ("operations run twice in a row with no benefit to liveness").
 * The last checkpoints are the stage's checkpoints, and its inputs from other
 * stages (PopART checkpoints their copies), on which no later checkpoint of
 * the stage depends. Returns the forward nodes after them.
 */
function afterFinalCheckpoints(graph: Graph, origins: ValueOrigins): Set<NodeId> {
  const loss = graph.roles.loss === undefined ? undefined : origins.producer(graph.roles.loss);
  if (!loss) return new Set();
  const stage = origins.stageOf(loss.id);
  const inStage = (node: Node) => node.annotations.pass === 'forward' && origins.stageOf(node.id) === stage;
  const readers = readersOfValues(graph, inStage);
  // Whether a node's outputs reach a checkpoint of the stage.
  const feedsCheckpoint = new Set<NodeId>();
  const reachesCheckpoint = (id: ValueId) => (readers.get(id) ?? []).some((r) => r.annotations.checkpoint || feedsCheckpoint.has(r.id));
  for (const node of [...graph.nodes].reverse()) if (inStage(node) && node.outputs.some(reachesCheckpoint)) feedsCheckpoint.add(node.id);
  const frontier: ValueId[] = [];
  for (const node of graph.nodes) if (inStage(node) && node.annotations.checkpoint && !feedsCheckpoint.has(node.id)) frontier.push(...node.outputs);
  for (const id of readers.keys()) {
    const made = origins.producer(id);
    if (made && origins.stageOf(made.id) !== stage && !reachesCheckpoint(id)) frontier.push(id);
  }
  const after = new Set<NodeId>();
  while (frontier.length > 0) {
    for (const reader of readers.get(frontier.pop()!) ?? []) {
      if (after.has(reader.id)) continue;
      after.add(reader.id);
      frontier.push(...reader.outputs);
    }
  }
  return after;
}

/** Whether `type` stores a forward value: stage inputs and checkpoint outputs always, dropout masks of the stage never, the rest as the type says. */
function storedByType(graph: Graph, origins: ValueOrigins, type: RecomputationType): (id: ValueId) => boolean {
  const always = alwaysStored(graph, origins);
  const masks = dropoutMaskValues(graph);
  if (type === 'None') return (id) => always.has(id) || !masks[id];
  const stored = new Set(always);
  storeForType(graph, origins, type, stored);
  if (type === 'Pipeline') for (const node of afterFinalCheckpoints(graph, origins)) graph.nodes[node]!.outputs.forEach((id) => stored.add(id));
  return (id) => always.has(id) || (stored.has(id) && !masks[id]);
}

/** The plan of `type` for a placed training graph. */
export function planRecomputation(graph: Graph, placement: Placement, type: RecomputationType): RecomputationPlan {
  const origins = valueOrigins(graph, placement);
  const { recomputed, rerun } = walkBackFromReads(graph, origins, storedByType(graph, origins, type));
  return { recomputed, unitNodes: rerunByUnit(placement, origins, rerun) };
}
