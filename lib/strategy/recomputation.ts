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
 *   stores its inputs and its checkpoints only.
 */
import { PoptfjsError } from '../common/errors.js';
import type { Graph, Node, NodeId, ValueId } from '../ir/graph.js';
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

/** The plan of `type` for a placed training graph. */
// biome-ignore lint/complexity/noExcessiveCognitiveComplexity: one branch per recomputation type, each choosing the values it recomputes
export function planRecomputation(graph: Graph, placement: Placement, type: RecomputationType): RecomputationPlan {
  if (type === 'None') return { recomputed: new Set(), unitNodes: new Map() };
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

  // Stored whatever the type: stage inputs and checkpoint outputs.
  const stored = new Set<ValueId>();
  for (const node of graph.nodes) {
    if (node.annotations.checkpoint) node.outputs.forEach((id) => stored.add(id));
    for (const id of node.inputs) {
      const made = producer(id);
      if (made && stageOf(made.id) !== stageOf(node.id)) stored.add(id);
    }
  }
  if (type === 'Standard') {
    // The activations (not views) the backward pass reads, by stage, in forward order.
    const read = new Set<ValueId>();
    for (const node of graph.nodes) if (node.annotations.pass === 'backward') node.inputs.forEach((id) => read.add(id));
    const byStage = new Map<number, ValueId[]>();
    for (const id of [...read].sort((a, b) => a - b)) {
      const node = producer(id);
      if (!node || !forwardValue(id) || isViewNode(graph, node)) continue;
      byStage.set(stageOf(node.id), [...(byStage.get(stageOf(node.id)) ?? []), id]);
    }
    const checkpointed = new Set(graph.nodes.filter((n) => n.annotations.checkpoint).map((n) => stageOf(n.id)));
    for (const [stage, values] of byStage) {
      if (checkpointed.has(stage)) continue;
      const every = Math.ceil(Math.sqrt(values.length));
      values.forEach((id, i) => (i + 1) % every === 0 && stored.add(id));
    }
  } else if (type === 'NormOnly') {
    for (const node of graph.nodes) if (node.annotations.pass === 'forward' && !NORMALISATION_KERNEL.test(node.kernel)) node.outputs.forEach((id) => stored.add(id));
  } else if (type !== 'Pipeline' && type !== 'RecomputeAll') {
    throw new PoptfjsError(`unknown recomputation type '${String(type)}'; expected one of ${Object.values(RecomputationType).join(', ')}`, { type: 'options' });
  }

  // From the forward values the backward pass reads, back through what is not stored.
  const recomputed = new Set<ValueId>();
  const rerun = new Set<NodeId>();
  const pending: ValueId[] = [];
  for (const node of graph.nodes) if (node.annotations.pass === 'backward') pending.push(...node.inputs);
  while (pending.length > 0) {
    const id = pending.pop()!;
    if (recomputed.has(id) || stored.has(id) || !forwardValue(id)) continue;
    recomputed.add(id);
    const node = producer(id)!;
    if (!rerun.has(node.id)) {
      rerun.add(node.id);
      pending.push(...node.inputs);
    }
  }
  const unitNodes = new Map<number, NodeId[]>();
  for (const id of [...rerun].sort((a, b) => a - b)) {
    // A re-run node feeds a backward node of its own stage (stage inputs are stored), so its stage has a backward unit.
    const unit = placement.units.findIndex((u) => u.pass === 'backward' && u.stages.includes(stageOf(id)));
    unitNodes.set(unit, [...(unitNodes.get(unit) ?? []), id]);
  }
  return { recomputed, unitNodes };
}
