/**
 * Host I/O of one call: which IPU of a replica receives each host input and
 * sends each output back, alongside which unit of the schedule, and how the
 * IPUs synchronise with the host for it (`Options.syncPattern`).
 *
 * PopTorch's `Options.syncPattern` (python/options.py) and PopART's
 * `SyncPattern` (willow/include/popart/devicemanager.hpp) define:
 * - `Full`: "Require all IPUs to synchronise on every communication between
 *   IPUs or between IPUs and host" (the default);
 * - `SinglePipeline`: "Allow IPUs to synchronise with the host independently,
 *   without having to synchronise with each other. This permits any one IPU
 *   to perform host IO while other IPUs are processing data";
 * - `ReplicaAndLadder`: "Allow an IPU group to communicate with the host
 *   without requiring synchronisation between groups. This permits multiple
 *   IPU groups to alternate between performing host IO and computation."
 * PopART passes them to Poplar as the target's `syncConfiguration`:
 * the default (`intraReplicaAndAll`) for `Full`, `ipuAndAll` for
 * `SinglePipeline` and `intraReplicaAndLadder` for `ReplicaAndLadder`
 * (willow/src/popx/devicexmanager.cpp, `addSyncConfig`).
 */
import { PoptfjsError } from '../common/errors.js';
import type { Graph } from '../ir/graph.js';
import { valueBytes } from '../ir/node_cost.js';
import type { HostOverlapMark, OverlappingMode } from '../ir/host_overlap.js';
import type { SyncPattern } from '../option_vocabulary/enums.js';
import type { Placement } from '../strategy/placement.js';

/**
 * How the simulated IPUs synchronise with the host:
 * - `Full`: every host transfer is a sync of all the IPUs of the replica:
 *   the inputs of the call go in before the schedule and the outputs come
 *   out after it, and every IPU waits for them;
 * - `SinglePipeline`: each IPU meets the host on its own: the inputs of a
 *   micro-batch go in to the IPU that reads them in the step where it reads
 *   them, and outputs returned for every micro-batch come out of the IPU
 *   that produces them in the step that produces them, while the other IPUs
 *   compute; outputs returned once a call (output modes `Final`, `Sum`) or
 *   every N-th device iteration (`EveryN`) come out of their IPU after the
 *   schedule. Inputs and outputs marked for overlap (`ops.setOverlapForInput`
 *   / `setOverlapForOutput`) move on the I/O tiles alongside the schedule
 *   either way; `SinglePipeline` then only spares the IPUs that neither read
 *   nor make them.
 */
export type HostSyncPattern = 'Full' | 'SinglePipeline';

/** A value crossing the host link in a call. */
export interface HostTransfer {
  readonly direction: 'in' | 'out';
  /** The IPU of the replica that reads the value (`in`) or produces it (`out`). */
  readonly ipu: number;
  /** The unit of the node that reads or produces it. */
  readonly unit: number;
  /** Bytes per call, per replica. */
  readonly bytes: number;
  /** Whether the value crosses once per micro-batch (inputs, outputs returned for every micro-batch) rather than once after the schedule. */
  readonly perMicroBatch: boolean;
  /** The loop the transfer overlaps on the I/O tiles (`ops.setOverlapForInput` / `setOverlapForOutput`); absent: it goes through the compute tiles when it is needed. */
  readonly overlap?: OverlappingMode;
}

/** What {@link hostTransfers} needs besides the graph and placement. */
export interface HostTransferRequest {
  /** Micro-batches each replica runs per call. */
  readonly microBatchesPerReplica: number;
  /** Micro-batches whose outputs each replica sends back per call (the output mode's). */
  readonly returnedMicroBatches: number;
  /** The anchored values, the last graph outputs, in order, with the micro-batches each replica sends back per call. */
  readonly anchoredOutputs: readonly { readonly returnedMicroBatches: number }[];
}

/**
 * The host transfers of one call: each host input (the loss scale excepted)
 * to the IPU of the first node that reads it, each model output, the loss
 * and each anchored value from the IPU of the node that makes it (a value no
 * node reads or makes goes with the first unit).
 */
export function hostTransfers(graph: Graph, placement: Placement, request: HostTransferRequest): HostTransfer[] {
  const at = (node: number | undefined) =>
    node === undefined ? { ipu: placement.units[0]!.ipus[0]!, unit: 0 } : { ipu: placement.stages[placement.nodeStages[node]!]!.ipu, unit: placement.nodeUnits[node]! };
  const transfers: HostTransfer[] = [];
  const overlap = (of: HostOverlapMark['of'], index: number) => {
    const mark = graph.roles.hostOverlap?.find((m) => m.of === of && m.index === index);
    return mark ? { overlap: mark.mode } : {};
  };
  const firstReader = new Map<number, number>();
  for (const node of graph.nodes) for (const id of node.inputs) if (!firstReader.has(id)) firstReader.set(id, node.id);
  graph.inputs.forEach((id, index) => {
    if (graph.values[id]!.source.kind !== 'input' || id === graph.roles.lossScale) return;
    const bytes = valueBytes(graph, id) * request.microBatchesPerReplica;
    transfers.push({ direction: 'in', ...at(firstReader.get(id)), bytes, perMicroBatch: true, ...overlap('input', index) });
  });
  const anchored = request.anchoredOutputs;
  const modelOutputs = graph.roles.outputs.slice(0, graph.roles.outputs.length - anchored.length);
  const returned = [
    ...modelOutputs.map((id, index) => ({ id, microBatches: request.returnedMicroBatches, ...overlap('output', index) })),
    ...(graph.roles.loss !== undefined ? [{ id: graph.roles.loss, microBatches: request.returnedMicroBatches, ...overlap('loss', 0) }] : []),
    ...anchored.map((a, i) => ({ id: graph.roles.outputs[modelOutputs.length + i]!, microBatches: a.returnedMicroBatches })),
  ];
  for (const { id, microBatches, ...marked } of returned) {
    const source = graph.values[id]!.source;
    const bytes = valueBytes(graph, id) * microBatches;
    const perMicroBatch = microBatches === request.microBatchesPerReplica;
    transfers.push({ direction: 'out', ...at(source.kind === 'node' ? source.node : firstReader.get(id)), bytes, perMicroBatch, ...marked });
  }
  return transfers;
}

/**
 * The simulated engine's sync pattern for `Options.syncPattern`; an error
 * for `ReplicaAndLadder`, which the engine cannot tell apart from `Full`.
 */
export function hostSyncPattern(pattern: SyncPattern): HostSyncPattern {
  if (pattern !== 'ReplicaAndLadder') return pattern;
  throw new PoptfjsError(
    'syncPattern(ReplicaAndLadder) cannot be modelled by the simulated engine: it lets groups of IPUs (replicas) meet the host without ' +
      'synchronising with each other while the IPUs within a replica still synchronise together (Poplar syncConfiguration ' +
      "'intraReplicaAndLadder'), but the simulated replicas already move their host data independently and run the same timeline " +
      'at the same time, so it would change nothing; use SyncPattern.Full, or SyncPattern.SinglePipeline to let each IPU meet the host on its own',
    { type: 'options' },
  );
}
