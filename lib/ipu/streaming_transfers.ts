/**
 * Streaming-memory transfers, as part of the plan so the hardware model can
 * cost them. What moves follows where tensors live:
 *
 * - phased execution, by the strategy's `Liveness`:
 *   - `AlwaysLive`: everything stays on the IPUs;
 *   - `OffChipAfterFwd`: the activations stashed for the backward pass go to
 *     streaming memory after their forward phase and come back before the
 *     backward phase that needs them, overlapping compute;
 *   - `OffChipAfterFwdNoOverlap`: the same, without overlapping compute;
 *   - `OffChipAfterEachPhase`: before every phase its weights and the
 *     activations it reads from other phases are loaded, and after it what
 *     later phases need (and, after a backward phase, its weights) is stored;
 * - `Options.TensorLocations` (any strategy): off-chip weights are loaded
 *   for every step that reads them (the whole weight; a sharded weight is
 *   loaded as its shard and gathered from the other replicas); off-chip
 *   activations are stashed like `OffChipAfterFwd`; off-chip gradient
 *   accumulators are loaded and stored around every backward unit that
 *   adds to them. These overlap compute when they go through the I/O tiles.
 *
 * Off-chip optimizer state moves at the weight update, which the timeline
 * costs with the update.
 */
import { sizeOf, type Graph, type ValueId } from '../ir/graph.js';
import { valueBytes } from '../ir/node_cost.js';
import { isOffChip, ON_CHIP_STORAGE, shardFraction, type TensorStorage } from './tensor_storage.js';
import type { Placement } from '../strategy/placement.js';
import type { Schedule } from '../strategy/schedule.js';

/** One transfer between an IPU and streaming memory around a schedule step. */
export interface StreamingTransfer {
  /** The schedule step it belongs to. */
  readonly step: number;
  /** Before the step's compute (a load) or after it (a store). */
  readonly when: 'before' | 'after';
  readonly ipu: number;
  readonly direction: 'load' | 'store';
  readonly kind: 'weights' | 'activations' | 'gradient accumulators';
  readonly bytes: number;
  /** Bytes gathered from the other replicas over the IPU-Links after a load of sharded weights. */
  readonly gatheredBytes?: number;
  /** Whether the transfer can overlap the compute of other phases. */
  readonly overlapsCompute: boolean;
}

/** What each stage reads and makes, in bytes. */
interface StageTraffic {
  /** Parameters read by the stage's nodes (all of them, and those that live off chip: the shards loaded and what is gathered). */
  weights: number;
  offChipWeights: number;
  gatheredWeights: number;
  /** Gradient accumulators of the trained weights the stage reads, when they live off chip. */
  offChipAccumulators: number;
  /** Forward activations of the stage that the backward pass reads (all of them, and those that may live off chip). */
  stash: number;
  offChipStash: number;
  /** Forward values the stage reads from other stages. */
  incoming: number;
  /** Forward values of the stage read by other stages' forward nodes. */
  outgoing: number;
}

function stageTraffic(graph: Graph, placement: Placement, storage: TensorStorage, trained: ReadonlySet<string>): StageTraffic[] {
  const traffic = placement.stages.map(() => ({
    weights: 0,
    offChipWeights: 0,
    gatheredWeights: 0,
    offChipAccumulators: 0,
    stash: 0,
    offChipStash: 0,
    incoming: 0,
    outgoing: 0,
  }));
  const producerStage = (id: ValueId) => {
    const s = graph.values[id]!.source;
    return s.kind === 'node' ? placement.nodeStages[s.node]! : -1;
  };
  const counted = { weights: new Set<string>(), stash: new Set<ValueId>(), incoming: new Set<string>(), outgoing: new Set<ValueId>() };
  for (const node of graph.nodes) {
    const stage = placement.nodeStages[node.id]!;
    const backward = node.annotations.pass === 'backward';
    for (const id of node.inputs) {
      const v = graph.values[id]!;
      const elements = sizeOf(v.shape);
      if (v.source.kind === 'param') {
        const key = `${stage}:${id}`;
        if (!counted.weights.has(key)) {
          counted.weights.add(key);
          traffic[stage]!.weights += valueBytes(graph, id);
          if (isOffChip(storage.weight, elements)) {
            const shard = valueBytes(graph, id) * shardFraction(storage.weight, elements, storage.replicationFactor);
            traffic[stage]!.offChipWeights += shard;
            traffic[stage]!.gatheredWeights += valueBytes(graph, id) - shard;
          }
          if (trained.has(v.source.name) && isOffChip(storage.accumulator, elements)) traffic[stage]!.offChipAccumulators += valueBytes(graph, id);
        }
        continue;
      }
      if (v.source.kind !== 'node') continue;
      const from = producerStage(id);
      const producedForward = graph.nodes[v.source.node]!.annotations.pass === 'forward';
      if (backward && producedForward && !counted.stash.has(id)) {
        counted.stash.add(id);
        traffic[from]!.stash += valueBytes(graph, id);
        if (isOffChip(storage.activation, elements)) traffic[from]!.offChipStash += valueBytes(graph, id);
      } else if (!backward && from !== stage) {
        const key = `${stage}:${id}`;
        if (!counted.incoming.has(key)) {
          counted.incoming.add(key);
          traffic[stage]!.incoming += valueBytes(graph, id);
        }
        if (!counted.outgoing.has(id)) {
          counted.outgoing.add(id);
          traffic[from]!.outgoing += valueBytes(graph, id);
        }
      }
    }
  }
  return traffic;
}

/** What {@link streamingTransfers} needs besides the placed, scheduled graph. */
export interface TransferRequest {
  /** Where each kind of tensor lives (default: everything on chip). */
  readonly storage?: TensorStorage;
  readonly training: boolean;
  /** Names of the weights the optimizer trains (their accumulators may live off chip). */
  readonly trainedWeights?: ReadonlySet<string>;
  /** Gradient accumulation steps (accumulators exist above 1). */
  readonly gradientAccumulation?: number;
  /** Whether gradients are accumulated in a tensor of their own, not in the optimizer state (default true). */
  readonly separateAccumulator?: boolean;
}

/** The streaming transfers of a plan (none when everything lives on chip). */
export function streamingTransfers(graph: Graph, placement: Placement, schedule: Schedule, request: TransferRequest): StreamingTransfer[] {
  const storage = request.storage ?? ON_CHIP_STORAGE;
  const liveness = placement.phased?.liveness ?? 'AlwaysLive';
  const locationsOffChip = storage.weight.offChip || (request.training && (storage.activation.offChip || storage.accumulator.offChip));
  if (liveness === 'AlwaysLive' && !locationsOffChip) return [];
  const accumulating = (request.gradientAccumulation ?? 1) > 1 && request.separateAccumulator !== false;
  const traffic = stageTraffic(graph, placement, storage, request.training && accumulating ? (request.trainedWeights ?? new Set()) : new Set());
  const transfers: StreamingTransfer[] = [];
  const add = (step: number, when: 'before' | 'after', stage: number, kind: StreamingTransfer['kind'], bytes: number, overlapsCompute: boolean, gatheredBytes = 0) => {
    if (bytes <= 0) return;
    transfers.push({
      step,
      when,
      ipu: placement.stages[stage]!.ipu,
      direction: when === 'before' ? 'load' : 'store',
      kind,
      bytes,
      ...(gatheredBytes > 0 ? { gatheredBytes } : {}),
      overlapsCompute,
    });
  };
  const load = storage.weight.loadThroughIoTiles;
  schedule.steps.forEach((step, t) => {
    const weightsLoaded = new Set<number>();
    for (const work of step.work) {
      const unit = placement.units[work.unit]!;
      for (const stage of unit.stages) {
        const s = traffic[stage]!;
        if (liveness === 'OffChipAfterEachPhase') {
          add(t, 'before', stage, 'weights', s.weights, true);
          if (unit.pass === 'forward') {
            add(t, 'before', stage, 'activations', s.incoming, true);
            add(t, 'after', stage, 'activations', s.outgoing + s.stash, true);
          } else {
            add(t, 'before', stage, 'activations', s.stash, true);
            add(t, 'after', stage, 'weights', s.weights, true);
          }
          continue;
        }
        if (liveness !== 'AlwaysLive') {
          const overlap = liveness !== 'OffChipAfterFwdNoOverlap';
          if (unit.pass === 'forward') add(t, 'after', stage, 'activations', s.stash, overlap);
          else add(t, 'before', stage, 'activations', s.stash, overlap);
        } else if (request.training && s.offChipStash > 0) {
          if (unit.pass === 'forward') add(t, 'after', stage, 'activations', s.offChipStash, storage.activation.storeThroughIoTiles);
          else add(t, 'before', stage, 'activations', s.offChipStash, storage.activation.loadThroughIoTiles);
        }
        if (!weightsLoaded.has(stage)) {
          weightsLoaded.add(stage);
          add(t, 'before', stage, 'weights', s.offChipWeights, load, s.gatheredWeights);
        }
        if (unit.pass === 'backward') {
          add(t, 'before', stage, 'gradient accumulators', s.offChipAccumulators, storage.accumulator.loadThroughIoTiles);
          add(t, 'after', stage, 'gradient accumulators', s.offChipAccumulators, storage.accumulator.storeThroughIoTiles);
        }
      }
    }
  });
  return transfers;
}
