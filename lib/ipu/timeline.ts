/**
 * The simulated timeline of one call: the schedule laid out in time on each
 * IPU of a replica, from the cost model.
 *
 * - A kernel takes its launch overhead plus the longer of its FLOPs at peak
 *   rate (fp16 when it computes in float16, else fp32) and its bytes at
 *   on-tile memory bandwidth.
 * - Under recomputation, a backward unit first re-runs the forward nodes
 *   that remake the activations it recomputes.
 * - A value read on another IPU than the one that made it is copied over the
 *   IPU-Links before the reader's compute in that step.
 * - Streaming-memory transfers of phased execution overlap compute or not, as
 *   their liveness says.
 * - Every schedule step ends with a sync across the IPUs (bulk-synchronous
 *   execution); the step lasts as long as its busiest IPU.
 * - Host I/O moves the call's inputs in and outputs out over the host link;
 *   in training, each device iteration ends with the gradient all-reduce
 *   across replicas (a ring: 2(R-1)/R of the gradient bytes over the links)
 *   and the optimizer update.
 *
 * Replicas run the same timeline at the same time on their own IPUs.
 */
import { paramValues, type Graph } from '../ir/graph.js';
import { computesInFloat16, nodeCost, valueBytes } from '../ir/node_cost.js';
import type { Placement } from '../strategy/placement.js';
import type { RecomputationPlan } from '../strategy/recomputation.js';
import type { Schedule } from '../strategy/schedule.js';
import type { StreamingTransfer } from '../strategy/streaming_transfers.js';
import { tileMemoryBandwidth, type IpuTargetSpec } from './target_spec.js';

/** What an IPU does in a segment of time. */
export type SegmentKind = 'compute' | 'exchange' | 'streaming' | 'sync' | 'host' | 'all-reduce' | 'update';

/** A stretch of time on one IPU. */
export interface TimelineSegment {
  readonly ipu: number;
  readonly kind: SegmentKind;
  /** Start and end, in seconds from the start of the call. */
  readonly start: number;
  readonly end: number;
  /** What runs: `F1:3` (forward of stage 1 on micro-batch 3), `sync`, ... */
  readonly label: string;
}

/** Busy time of one IPU by kind, and its utilization. */
export interface IpuActivity {
  readonly ipu: number;
  readonly compute: number;
  readonly exchange: number;
  readonly streaming: number;
  readonly sync: number;
  readonly host: number;
  readonly collective: number;
  readonly idle: number;
  /** Compute time over the call's duration. */
  readonly utilization: number;
}

/** The simulated execution of one call. */
export interface Timeline {
  readonly segments: readonly TimelineSegment[];
  /** Seconds one call takes. */
  readonly duration: number;
  /** Cycles one call takes, at the target's clock. */
  readonly cycles: number;
  readonly ipus: readonly IpuActivity[];
  /** Samples per second over all replicas. */
  readonly throughput: number;
  /**
   * Fraction of the schedule's IPU-time spent idle while other IPUs work
   * (the pipeline bubble): idle / (steps' total duration × IPUs).
   */
  readonly bubbleFraction: number;
}

/** What the timeline needs. */
export interface TimelineRequest {
  readonly graph: Graph;
  readonly placement: Placement;
  readonly schedule: Schedule;
  readonly transfers: readonly StreamingTransfer[];
  readonly spec: IpuTargetSpec;
  readonly training: boolean;
  /** Schedule runs per call: device iterations in training, 1 in inference. */
  readonly scheduleRuns: number;
  readonly replicationFactor: number;
  /** Samples one call consumes (all replicas). */
  readonly samplesPerCall: number;
  /** Bytes of the host inputs and outputs of one call, per replica. */
  readonly hostBytesIn: number;
  readonly hostBytesOut: number;
  /** Names of trained weights (their gradients are all-reduced and updated). */
  readonly trainedWeights: ReadonlySet<string>;
  /** Optimizer state tensors per trained weight. */
  readonly optimizerSlots: number;
  /** What the backward pass recomputes (default: nothing). */
  readonly recomputation?: RecomputationPlan;
}

/** Simulates one call. */
export function simulateTimeline(request: TimelineRequest): Timeline {
  const { graph, placement, schedule, spec } = request;
  const ipuCount = placement.ipusPerReplica;
  const ipuOfNode = (node: number) => placement.stages[placement.nodeStages[node]!]!.ipu;
  const memoryBandwidth = tileMemoryBandwidth(spec);
  const overhead = spec.kernelOverheadCycles / spec.clockHz;
  const nodeTime = graph.nodes.map((node) => {
    const cost = nodeCost(graph, node);
    if (cost.flops === 0 && cost.bytes === 0) return 0;
    const peak = computesInFloat16(graph, node) ? spec.peakFlopsFp16 : spec.peakFlopsFp32;
    return overhead + Math.max(cost.flops / peak, cost.bytes / memoryBandwidth);
  });
  const unitNodes = placement.units.map(() => [] as number[]);
  graph.nodes.forEach((n) => unitNodes[placement.nodeUnits[n.id]!]!.push(n.id));
  // Bytes each node must receive from other IPUs (first reader on an IPU pays for the copy).
  const copyBytes = new Array<number>(graph.nodes.length).fill(0);
  const copied = new Set<string>();
  for (const node of graph.nodes) {
    const ipu = ipuOfNode(node.id);
    for (const id of node.inputs) {
      const source = graph.values[id]!.source;
      if (source.kind !== 'node' || ipuOfNode(source.node) === ipu || copied.has(`${id}@${ipu}`)) continue;
      copied.add(`${id}@${ipu}`);
      copyBytes[node.id]! += valueBytes(graph, id);
    }
  }

  const segments: TimelineSegment[] = [];
  const push = (ipu: number, kind: SegmentKind, start: number, length: number, label: string) => {
    if (length > 0) segments.push({ ipu, kind, start, end: start + length, label });
  };
  const allIpus = Array.from({ length: ipuCount }, (_, i) => i);
  let now = 0;
  let scheduleTime = 0;
  let scheduleBusy = 0;

  const hostIn = request.hostBytesIn / spec.hostLinkBandwidth;
  for (const ipu of allIpus) push(ipu, 'host', now, hostIn, 'host → device');
  now += hostIn;

  const syncTime = ipuCount > 1 ? spec.syncCycles / spec.clockHz : 0;
  for (let run = 0; run < request.scheduleRuns; run++) {
    schedule.steps.forEach((step, t) => {
      const compute = new Array<number>(ipuCount).fill(0);
      const exchange = new Array<number>(ipuCount).fill(0);
      const labels = allIpus.map(() => [] as string[]);
      for (const work of step.work) {
        const unit = placement.units[work.unit]!;
        for (const nodeId of request.recomputation?.unitNodes.get(work.unit) ?? []) compute[ipuOfNode(nodeId)]! += nodeTime[nodeId]!;
        for (const nodeId of unitNodes[work.unit]!) {
          const ipu = ipuOfNode(nodeId);
          compute[ipu]! += nodeTime[nodeId]!;
          exchange[ipu]! += copyBytes[nodeId]! / spec.ipuLinkBandwidth;
        }
        unit.stages.forEach((stage, i) => labels[unit.ipus[i]!]!.push(`${unit.pass === 'forward' ? 'F' : 'B'}${stage}:${work.microBatch}`));
      }
      const streamIn = new Array<number>(ipuCount).fill(0);
      const streamOut = new Array<number>(ipuCount).fill(0);
      const overlapping = new Array<boolean>(ipuCount).fill(true);
      for (const tr of request.transfers) {
        if (tr.step !== t) continue;
        const seconds = tr.bytes / spec.streamingMemoryBandwidth;
        if (tr.when === 'before') streamIn[tr.ipu]! += seconds;
        else streamOut[tr.ipu]! += seconds;
        if (!tr.overlapsCompute) overlapping[tr.ipu] = false;
      }
      const busy = allIpus.map((ipu) => {
        const work = exchange[ipu]! + compute[ipu]!;
        const streaming = streamIn[ipu]! + streamOut[ipu]!;
        return overlapping[ipu] ? Math.max(work, streaming) : work + streaming;
      });
      const length = Math.max(...busy);
      for (const ipu of allIpus) {
        let at = now;
        if (!overlapping[ipu]) {
          push(ipu, 'streaming', at, streamIn[ipu]!, 'load');
          at += streamIn[ipu]!;
        } else {
          push(ipu, 'streaming', at, streamIn[ipu]! + streamOut[ipu]!, 'streaming');
        }
        push(ipu, 'exchange', at, exchange[ipu]!, 'exchange');
        at += exchange[ipu]!;
        push(ipu, 'compute', at, compute[ipu]!, labels[ipu]!.join(' '));
        at += compute[ipu]!;
        if (!overlapping[ipu]) push(ipu, 'streaming', at, streamOut[ipu]!, 'store');
        push(ipu, 'sync', now + length, syncTime, 'sync');
        scheduleBusy += busy[ipu]!;
      }
      now += length + syncTime;
      scheduleTime += length;
    });
    if (request.training) {
      const params = paramValues(graph);
      const weightIpu = new Map<string, number>();
      for (const node of graph.nodes) {
        for (const id of node.inputs) {
          const source = graph.values[id]!.source;
          if (source.kind === 'param' && request.trainedWeights.has(source.name) && !weightIpu.has(source.name)) weightIpu.set(source.name, ipuOfNode(node.id));
        }
      }
      const gradientBytes = new Array<number>(ipuCount).fill(0);
      for (const [name, ipu] of weightIpu) gradientBytes[ipu]! += valueBytes(graph, params.get(name)!.id);
      const R = request.replicationFactor;
      const allReduce = allIpus.map((ipu) => (R > 1 ? ((2 * (R - 1)) / R) * gradientBytes[ipu]! / spec.ipuLinkBandwidth : 0));
      const update = allIpus.map((ipu) => ((2 + request.optimizerSlots * 2) * gradientBytes[ipu]!) / memoryBandwidth);
      for (const ipu of allIpus) {
        push(ipu, 'all-reduce', now, allReduce[ipu]!, 'gradient all-reduce');
        push(ipu, 'update', now + allReduce[ipu]!, update[ipu]!, 'optimizer');
      }
      now += Math.max(0, ...allIpus.map((ipu) => allReduce[ipu]! + update[ipu]!));
    }
  }
  const hostOut = request.hostBytesOut / spec.hostLinkBandwidth;
  for (const ipu of allIpus) push(ipu, 'host', now, hostOut, 'device → host');
  now += hostOut;

  const duration = now;
  const sum = (ipu: number, kind: SegmentKind) => segments.filter((s) => s.ipu === ipu && s.kind === kind).reduce((a, s) => a + s.end - s.start, 0);
  const ipus: IpuActivity[] = allIpus.map((ipu) => {
    const activity = {
      compute: sum(ipu, 'compute'),
      exchange: sum(ipu, 'exchange'),
      streaming: sum(ipu, 'streaming'),
      sync: sum(ipu, 'sync'),
      host: sum(ipu, 'host'),
      collective: sum(ipu, 'all-reduce') + sum(ipu, 'update'),
    };
    const busyTime = Object.values(activity).reduce((a, b) => a + b, 0);
    return { ipu, ...activity, idle: Math.max(0, duration - busyTime), utilization: duration > 0 ? activity.compute / duration : 0 };
  });
  const scheduleCapacity = scheduleTime * ipuCount;
  return {
    segments,
    duration,
    cycles: Math.round(duration * spec.clockHz),
    ipus,
    throughput: duration > 0 ? request.samplesPerCall / duration : 0,
    bubbleFraction: scheduleCapacity > 0 ? 1 - scheduleBusy / scheduleCapacity : 0,
  };
}
