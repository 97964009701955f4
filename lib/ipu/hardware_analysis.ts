/**
 * What the simulated hardware makes of a compiled model: the memory of each
 * IPU (and whether it fits) and the timeline of one call.
 */
import type { Graph } from '../ir/graph.js';
import { valueBytes } from '../ir/node_cost.js';
import type { Placement } from '../strategy/placement.js';
import { planRecomputation, type RecomputationType } from '../strategy/recomputation.js';
import type { Schedule } from '../strategy/schedule.js';
import type { StreamingTransfer } from '../strategy/streaming_transfers.js';
import { memoryPlan, type MemoryPlan } from './memory_plan.js';
import type { IpuTargetSpec } from './target_spec.js';
import type { OptimizerSlot } from './memory_plan.js';
import { simulateTimeline, type Timeline } from './timeline.js';

/** The memory and time of a compiled model on its target. */
export interface HardwareAnalysis {
  readonly spec: IpuTargetSpec;
  readonly memory: MemoryPlan;
  readonly timeline: Timeline;
  /** What the backward pass recomputes, when recomputation is on: how many activations, and how many forward nodes it re-runs. */
  readonly recomputation?: { readonly type: RecomputationType; readonly values: number; readonly rerunNodes: number };
}

/** What the analysis needs. */
export interface HardwareRequest {
  readonly graph: Graph;
  readonly placement: Placement;
  readonly schedule: Schedule;
  readonly transfers: readonly StreamingTransfer[];
  readonly spec: IpuTargetSpec;
  readonly training: boolean;
  readonly deviceIterations: number;
  readonly gradientAccumulation: number;
  readonly replicationFactor: number;
  /** Samples one call consumes over all replicas. */
  readonly samplesPerCall: number;
  /** Micro-batches each replica runs per call. */
  readonly microBatchesPerReplica: number;
  readonly trainedWeights: ReadonlySet<string>;
  /** The state tensors the optimizer keeps per trained weight (their precision sets their size). */
  readonly optimizerSlots: readonly OptimizerSlot[];
  readonly availableMemoryProportion: Readonly<Record<number, number>>;
  /** Which activations a training step recomputes (default `None`). */
  readonly recomputation?: RecomputationType;
}

/** Analyses a placed and scheduled graph on its target. */
export function analyseHardware(request: HardwareRequest): HardwareAnalysis {
  const { graph } = request;
  const inputBytes = graph.inputs
    .filter((id) => graph.values[id]!.source.kind === 'input' && id !== graph.roles.lossScale)
    .reduce((sum, id) => sum + valueBytes(graph, id), 0);
  const outputBytes = [...graph.roles.outputs, ...(graph.roles.loss !== undefined ? [graph.roles.loss] : [])].reduce((sum, id) => sum + valueBytes(graph, id), 0);
  const type = request.training ? (request.recomputation ?? 'None') : 'None';
  const recomputation = planRecomputation(graph, request.placement, type);
  const memory = memoryPlan({
    graph,
    placement: request.placement,
    schedule: request.schedule,
    spec: request.spec,
    training: request.training,
    gradientAccumulation: request.gradientAccumulation,
    optimizerSlots: request.optimizerSlots,
    trainedWeights: request.trainedWeights,
    availableMemoryProportion: request.availableMemoryProportion,
    recomputation,
  });
  const timeline = simulateTimeline({
    graph,
    placement: request.placement,
    schedule: request.schedule,
    transfers: request.transfers,
    spec: request.spec,
    training: request.training,
    scheduleRuns: request.training ? request.deviceIterations : 1,
    replicationFactor: request.replicationFactor,
    samplesPerCall: request.samplesPerCall,
    hostBytesIn: inputBytes * request.microBatchesPerReplica,
    hostBytesOut: outputBytes * request.microBatchesPerReplica,
    trainedWeights: request.trainedWeights,
    optimizerSlots: request.optimizerSlots.length,
    recomputation,
  });
  const rerunNodes = [...recomputation.unitNodes.values()].reduce((n, nodes) => n + nodes.length, 0);
  return {
    spec: request.spec,
    memory,
    timeline,
    ...(type !== 'None' ? { recomputation: { type, values: recomputation.recomputed.size, rerunNodes } } : {}),
  };
}
