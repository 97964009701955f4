/**
 * Streaming-memory transfers of phased execution, as part of the plan so the
 * hardware model can cost them. Where tensors live between phases follows the
 * strategy's `Liveness`:
 *
 * - `AlwaysLive`: everything stays on the IPUs, nothing is streamed;
 * - `OffChipAfterFwd`: the activations stashed for the backward pass go to
 *   streaming memory after their forward phase and come back before the
 *   backward phase that needs them, overlapping compute;
 * - `OffChipAfterFwdNoOverlap`: the same, without overlapping compute;
 * - `OffChipAfterEachPhase`: before every phase its weights and the
 *   activations it reads from other phases are loaded, and after it what later
 *   phases need (and, after a backward phase, its weights) is stored.
 */
import type { Graph, ValueId } from '../ir/graph.js';
import { valueBytes } from '../ir/node_cost.js';
import type { Placement } from './placement.js';
import type { Schedule } from './schedule.js';

/** One transfer between an IPU and streaming memory around a schedule step. */
export interface StreamingTransfer {
  /** The schedule step it belongs to. */
  readonly step: number;
  /** Before the step's compute (a load) or after it (a store). */
  readonly when: 'before' | 'after';
  readonly ipu: number;
  readonly direction: 'load' | 'store';
  readonly kind: 'weights' | 'activations';
  readonly bytes: number;
  /** Whether the transfer can overlap the compute of other phases. */
  readonly overlapsCompute: boolean;
}

/** What each stage reads and makes, in bytes. */
interface StageTraffic {
  /** Parameters read by the stage's nodes. */
  weights: number;
  /** Forward activations of the stage that the backward pass reads. */
  stash: number;
  /** Forward values the stage reads from other stages. */
  incoming: number;
  /** Forward values of the stage read by other stages' forward nodes. */
  outgoing: number;
}

function stageTraffic(graph: Graph, placement: Placement): StageTraffic[] {
  const traffic = placement.stages.map(() => ({ weights: 0, stash: 0, incoming: 0, outgoing: 0 }));
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
      if (v.source.kind === 'param') {
        const key = `${stage}:${id}`;
        if (!counted.weights.has(key)) {
          counted.weights.add(key);
          traffic[stage]!.weights += valueBytes(graph, id);
        }
        continue;
      }
      if (v.source.kind !== 'node') continue;
      const from = producerStage(id);
      const producedForward = graph.nodes[v.source.node]!.annotations.pass === 'forward';
      if (backward && producedForward && !counted.stash.has(id)) {
        counted.stash.add(id);
        traffic[from]!.stash += valueBytes(graph, id);
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

/** The streaming transfers of a phased plan (none for other strategies or `AlwaysLive`). */
export function streamingTransfers(graph: Graph, placement: Placement, schedule: Schedule): StreamingTransfer[] {
  const liveness = placement.phased?.liveness;
  if (!liveness || liveness === 'AlwaysLive') return [];
  const traffic = stageTraffic(graph, placement);
  const transfers: StreamingTransfer[] = [];
  const add = (step: number, when: 'before' | 'after', stage: number, kind: 'weights' | 'activations', bytes: number) => {
    if (bytes <= 0) return;
    transfers.push({
      step,
      when,
      ipu: placement.stages[stage]!.ipu,
      direction: when === 'before' ? 'load' : 'store',
      kind,
      bytes,
      overlapsCompute: liveness !== 'OffChipAfterFwdNoOverlap',
    });
  };
  schedule.steps.forEach((step, t) => {
    for (const work of step.work) {
      const unit = placement.units[work.unit]!;
      for (const stage of unit.stages) {
        const s = traffic[stage]!;
        if (liveness === 'OffChipAfterEachPhase') {
          add(t, 'before', stage, 'weights', s.weights);
          if (unit.pass === 'forward') {
            add(t, 'before', stage, 'activations', s.incoming);
            add(t, 'after', stage, 'activations', s.outgoing + s.stash);
          } else {
            add(t, 'before', stage, 'activations', s.stash);
            add(t, 'after', stage, 'weights', s.weights);
          }
        } else if (unit.pass === 'forward') {
          add(t, 'after', stage, 'activations', s.stash);
        } else {
          add(t, 'before', stage, 'activations', s.stash);
        }
      }
    }
  });
  return transfers;
}
