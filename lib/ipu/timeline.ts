/**
 * The simulated timeline of one call: the schedule laid out in time on each
 * IPU of a replica, from the cost model of each kernel ({@link kernelCost}).
 *
 * - In a schedule step each IPU runs its units' kernels one after another;
 *   a kernel lasts its compute, on-chip exchange and syncs. Under
 *   recomputation a backward unit first re-runs the forward kernels that
 *   remake what it recomputes.
 * - A value read on another IPU than the one that made it is copied over the
 *   IPU-Links between the two in that step: four of an IPU's ten links join
 *   the two IPUs of a card, two lead to the next card (the link model of
 *   poplibs' tests, lib/poplibs_test/Util.cpp).
 * - Streaming-memory transfers load and store what lives off chip; they
 *   overlap compute when they go through I/O tiles (or a phased liveness
 *   lets them), and stall it otherwise.
 * - Every step ends with a sync across the IPUs (bulk-synchronous
 *   execution); the step lasts as long as its busiest IPU.
 * - A CPU op (`ops.CPU`) sends its inputs to the host and receives its
 *   outputs over the host link in its step, with a sync with the host in
 *   between ({@link hostSyncSeconds}); the host's time running it is not
 *   modelled.
 * - Host I/O moves the call's inputs in and outputs out at the host link's
 *   bandwidth (host_io.ts), through the compute tiles, before and after the
 *   schedule. Under the `Full` sync pattern every IPU waits for all of it;
 *   under `SinglePipeline` only the IPU that reads or produces a value does,
 *   and each micro-batch's share moves in the step that reads or produces
 *   it, so the step lasts max over IPUs of (transfers + work)
 *   ({@link HostSyncPattern}).
 * - Inputs and outputs marked for overlap (`ops.setOverlapForInput` /
 *   `setOverlapForOutput`) move through the I/O tiles instead, while the
 *   compute tiles run the loop they overlap, as PopART's `OverlapInnerLoop`
 *   and `OverlapLoops` exchange strategies do (popart's ExchangeStrategy
 *   docs, willow/include/popart/docs/pydocs_popart_core.hpp): of a loop of n
 *   micro-batches, the first micro-batch's inputs load before it and the last
 *   one's outputs store after it; the other n - 1 micro-batches' transfers
 *   run alongside it, which lasts at least as long as they do. The loop of
 *   `OverlapAccumulationLoop` is a device iteration's gradient accumulation
 *   (one micro-batch in inference), repeated each device iteration; that of
 *   `OverlapDeviceIterationLoop` is the whole call. Outputs returned once a
 *   call (`OutputMode.Sum`) store after the schedule in either case.
 * - In training, each device iteration ends with the gradient reduction
 *   across replicas (a ring all-reduce, 2(R-1)/R of the gradient bytes over
 *   two links; with sharded optimizer state a reduce-scatter and an
 *   all-gather of the same volume), the optimizer update, and the loads and
 *   stores of off-chip optimizer state: on all the IPUs at once, or, under
 *   the `Serial` weight-update schedule (PopART's default after gradient
 *   accumulation), one IPU after another.
 *
 * Replicas run the same timeline at the same time on their own IPUs.
 */
import { sizeOf, type Graph, type Node } from '../ir/graph.js';
import { valueBytes } from '../ir/node_cost.js';
import type { Placement } from '../strategy/placement.js';
import type { WeightUpdateSchedule } from '../strategy/compiler_defaults.js';
import type { RecomputationPlan } from '../strategy/recomputation.js';
import { MAX_LISTED_WORK, type Schedule, type ScheduleStep } from '../strategy/schedule.js';
import type { StreamingTransfer } from './streaming_transfers.js';
import type { HostSyncPattern, HostTransfer } from './host_io.js';
import type { OverlappingMode } from '../ir/host_overlap.js';
import { ELEMENTWISE_VERTEX_CYCLES, type KernelCost } from './kernel_cycles.js';
import { ipuSyncSeconds, type IpuTargetSpec } from './target_spec.js';
import { isOffChip, ON_CHIP_STORAGE, shardFraction, type TensorStorage } from './tensor_storage.js';

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
  /** Seconds computing (vertices running). */
  readonly compute: number;
  /** Seconds exchanging data between tiles and over the IPU-Links. */
  readonly exchange: number;
  readonly streaming: number;
  readonly sync: number;
  readonly host: number;
  readonly collective: number;
  readonly idle: number;
  /** Compute time over the call's duration. */
  readonly utilization: number;
}

/**
 * A stretch of a timeline that repeats what came before it instead of being
 * laid out in segments: a pipeline's steady state or a micro-batch's steps
 * beyond those a schedule lists, or device iterations after the first when
 * there are many. Its time and work count in the timeline's duration and
 * activity as if laid out.
 */
export interface RepeatedStretch {
  /** Start and end, in seconds from the start of the call. */
  readonly start: number;
  readonly end: number;
  /** How many times the stretch before it repeats. */
  readonly times: number;
  /** What repeats, e.g. `the steady-state step, for micro-batches 9 to 999999`. */
  readonly what: string;
}

/** The simulated execution of one call. */
export interface Timeline {
  /** What each IPU does, in order; stretches that repeat are in {@link repeated} instead. */
  readonly segments: readonly TimelineSegment[];
  /** Stretches not laid out in segments because they repeat what came before (absent when everything is laid out). */
  readonly repeated?: readonly RepeatedStretch[];
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
  /** The cost of each node on its IPU, by node id. */
  readonly nodeCosts: readonly KernelCost[];
  readonly training: boolean;
  /** Schedule runs per call: device iterations in training, 1 in inference. */
  readonly scheduleRuns: number;
  readonly replicationFactor: number;
  /** Samples one call consumes (all replicas). */
  readonly samplesPerCall: number;
  /** The host inputs and outputs of one call, per replica. */
  readonly hostTransfers: readonly HostTransfer[];
  /** How the IPUs synchronise with the host for them (default `Full`). */
  readonly syncPattern?: HostSyncPattern;
  /** Names of trained weights (their gradients are reduced and updated). */
  readonly trainedWeights: ReadonlySet<string>;
  /** Optimizer state tensors per trained weight, and their bytes per element. */
  readonly optimizerSlotBytes: readonly number[];
  /** Where each kind of tensor lives (default: everything on chip). */
  readonly storage?: TensorStorage;
  /** What the backward pass recomputes (default: nothing). */
  readonly recomputation?: RecomputationPlan;
  /** How the IPUs' weight updates are ordered: one IPU after another (`Serial`) or all at once (`Scheduler`, the default). */
  readonly weightUpdateSchedule?: WeightUpdateSchedule;
}

/** What one schedule step takes on each IPU: its work, its streaming before and after, its busy time, and the step's length (its busiest IPU's). */
interface StepTiming {
  readonly costs: readonly StepWork[];
  readonly streamIn: readonly number[];
  readonly streamOut: readonly number[];
  readonly overlapping: readonly boolean[];
  readonly busy: readonly number[];
  readonly length: number;
}

/** What a stretch of the timeline takes, summed as it is laid out: its time, its schedule steps' length and busy time, and each IPU's seconds by kind. */
interface Stretch {
  time: number;
  scheduleTime: number;
  scheduleBusy: number;
  readonly totals: readonly Map<SegmentKind, number>[];
}

/** IPU-Links joining the two IPUs of a card, and an IPU to the next card (poplibs' test model of the IPU-Link ladder). */
const LINKS_WITHIN_CARD = 4;
const LINKS_TO_NEXT_CARD = 2;
/** Links a ring collective across replicas runs over. */
const COLLECTIVE_LINKS = 2;

/** Bytes/s of a collective across replicas. */
function collectiveBandwidth(spec: IpuTargetSpec): number {
  return (spec.ipuLinkBandwidth * COLLECTIVE_LINKS) / spec.ipuLinks;
}

/** Bytes/s between IPUs `a` and `b` over the links that join them. */
function linkBandwidth(spec: IpuTargetSpec, a: number, b: number): number {
  const links = Math.floor(a / 2) === Math.floor(b / 2) ? LINKS_WITHIN_CARD : LINKS_TO_NEXT_CARD;
  return (spec.ipuLinkBandwidth * links) / spec.ipuLinks;
}

/** What one IPU does in a schedule step, in seconds. */
interface StepWork {
  compute: number;
  exchange: number;
  sync: number;
  /** CPU ops' inputs sent to the host, syncs with the host, and outputs received from it. */
  toHost: number;
  hostSync: number;
  fromHost: number;
  /** Under `SinglePipeline`: the step's micro-batches' host inputs this IPU reads and outputs it produces. */
  hostIn: number;
  hostOut: number;
}

/**
 * Seconds of a sync between an IPU and the host (around a CPU op): taken as
 * one sync hop there and back, the figure the model has for a sync.
 */
export function hostSyncSeconds(spec: IpuTargetSpec): number {
  return 2 * spec.syncHopLatency;
}

/** The IPU of each node of the request's graph. */
function nodeIpu(placement: Placement): (node: number) => number {
  return (node) => placement.stages[placement.nodeStages[node]!]!.ipu;
}

/** Seconds each node spends receiving values from other IPUs (its first reader on an IPU pays for the copy). */
function copySecondsOfNodes(request: TimelineRequest): number[] {
  const { graph, spec } = request;
  const ipuOfNode = nodeIpu(request.placement);
  const copySeconds = new Array<number>(graph.nodes.length).fill(0);
  const copied = new Set<string>();
  for (const node of graph.nodes) {
    const ipu = ipuOfNode(node.id);
    for (const id of node.inputs) {
      const source = graph.values[id]!.source;
      if (source.kind !== 'node' || ipuOfNode(source.node) === ipu || copied.has(`${id}@${ipu}`)) continue;
      copied.add(`${id}@${ipu}`);
      copySeconds[node.id]! += valueBytes(graph, id) / linkBandwidth(spec, ipuOfNode(source.node), ipu);
    }
  }
  return copySeconds;
}

/** The streaming transfers of each step, by step. */
function transfersByStep(transfers: readonly StreamingTransfer[]): Map<number, StreamingTransfer[]> {
  const byStep = new Map<number, StreamingTransfer[]>();
  for (const tr of transfers) {
    const ofStep = byStep.get(tr.step);
    if (ofStep) ofStep.push(tr);
    else byStep.set(tr.step, [tr]);
  }
  return byStep;
}

/** The loop a host transfer overlaps on the I/O tiles: that of its mark, for a transfer made each micro-batch; none for the others. */
function overlapLoop(tr: HostTransfer): OverlappingMode | undefined {
  return tr.perMicroBatch ? tr.overlap : undefined;
}

/** True if a host transfer is made in the steps (per micro-batch under `SinglePipeline`, through the compute tiles), not before or after them. */
function steppedTransfer(request: TimelineRequest): (tr: HostTransfer) => boolean {
  const single = request.syncPattern === 'SinglePipeline';
  return (tr) => single && overlapLoop(tr) === undefined && tr.perMicroBatch;
}

/** Seconds of the host transfers `pick` selects in `direction`, by IPU: under Full every IPU waits for all of them, under SinglePipeline only the IPU that reads or makes them. */
function hostSeconds(request: TimelineRequest, direction: HostTransfer['direction'], pick: (tr: HostTransfer) => boolean): number[] {
  const single = request.syncPattern === 'SinglePipeline';
  return Array.from(
    { length: request.placement.ipusPerReplica },
    (_, ipu) =>
      request.hostTransfers.filter((tr) => tr.direction === direction && pick(tr) && (!single || tr.ipu === ipu)).reduce((a, tr) => a + tr.bytes, 0) /
      request.spec.hostLinkBandwidth,
  );
}

/** Host transfers through the compute tiles outside the steps, in seconds by IPU. */
function hostSecondsOutsideSteps(request: TimelineRequest, direction: HostTransfer['direction']): number[] {
  const stepped = steppedTransfer(request);
  return hostSeconds(request, direction, (tr) => overlapLoop(tr) === undefined && !stepped(tr));
}

/** A loop whose host transfers run on the I/O tiles, each IPU's seconds: the first micro-batch's loads before it, the last one's stores after it, and the rest alongside it. */
interface OverlappedLoop {
  readonly firstLoads: readonly number[];
  readonly lastStores: readonly number[];
  readonly alongside: readonly number[];
}

/**
 * The transfers overlapping a loop of `mode` on each run of it: of a call,
 * `OverlapDeviceIterationLoop` runs once over all the micro-batches,
 * `OverlapAccumulationLoop` once a device iteration over the micro-batches
 * of its gradient accumulation (one in inference, where each micro-batch is
 * a device iteration).
 */
function overlappedLoop(request: TimelineRequest, mode: OverlappingMode): OverlappedLoop {
  const { scheduleRuns, schedule } = request;
  const runs = mode === 'OverlapDeviceIterationLoop' ? 1 : scheduleRuns;
  const iterations = mode === 'OverlapDeviceIterationLoop' ? scheduleRuns * schedule.microBatches : request.training ? schedule.microBatches : 1;
  const loads = hostSeconds(request, 'in', (tr) => overlapLoop(tr) === mode).map((s) => s / runs);
  const stores = hostSeconds(request, 'out', (tr) => overlapLoop(tr) === mode).map((s) => s / runs);
  return {
    firstLoads: loads.map((s) => s / iterations),
    lastStores: stores.map((s) => s / iterations),
    alongside: loads.map((s, ipu) => ((s + stores[ipu]!) * (iterations - 1)) / iterations),
  };
}

/** Lays out the first micro-batch's loads of an overlapped loop and the transfers alongside it; returns when the loop starts. */
function enterOverlappedLoop(layout: TimelineLayout, loop: OverlappedLoop): number {
  loop.firstLoads.forEach((seconds, ipu) => layout.push(ipu, 'host', layout.now, seconds, 'host → device (I/O tiles, first micro-batch)'));
  layout.advance(Math.max(...loop.firstLoads), 0);
  loop.alongside.forEach((seconds, ipu) => layout.push(ipu, 'host', layout.now, seconds, 'host ⇄ device (I/O tiles, overlapping compute)'));
  return layout.now;
}

/** Ends an overlapped loop that started at `start`: once its transfers alongside are done, the last micro-batch's stores. */
function leaveOverlappedLoop(layout: TimelineLayout, loop: OverlappedLoop, start: number): void {
  layout.advance(Math.max(0, start + Math.max(...loop.alongside) - layout.now), 0);
  loop.lastStores.forEach((seconds, ipu) => layout.push(ipu, 'host', layout.now, seconds, 'device → host (I/O tiles, last micro-batch)'));
  layout.advance(Math.max(...loop.lastStores), 0);
}

/** What each IPU does in each schedule step; steps with the same units (the steady state of a pipeline) take the same time. */
class StepTimings {
  private readonly unitNodes: number[][];
  private readonly copySeconds: number[];
  private readonly ipuOfNode: (node: number) => number;
  private readonly transfersOfStep: Map<number, StreamingTransfer[]>;
  private readonly stepped: (tr: HostTransfer) => boolean;
  private readonly allIpus: number[];
  private readonly stepCosts = new Map<string, StepWork[]>();

  constructor(private readonly request: TimelineRequest) {
    const { graph, placement } = request;
    this.unitNodes = placement.units.map(() => [] as number[]);
    graph.nodes.forEach((n) => this.unitNodes[placement.nodeUnits[n.id]!]!.push(n.id));
    this.copySeconds = copySecondsOfNodes(request);
    this.ipuOfNode = nodeIpu(placement);
    this.transfersOfStep = transfersByStep(request.transfers);
    this.stepped = steppedTransfer(request);
    this.allIpus = Array.from({ length: placement.ipusPerReplica }, (_, i) => i);
  }

  /** The timing of `step`, the `t`-th of the schedule. */
  of(step: ScheduleStep, t: number): StepTiming {
    const costs = this.costs(step);
    const ipuCount = this.allIpus.length;
    const { spec } = this.request;
    const streamIn = new Array<number>(ipuCount).fill(0);
    const streamOut = new Array<number>(ipuCount).fill(0);
    const overlapping = new Array<boolean>(ipuCount).fill(true);
    for (const tr of this.transfersOfStep.get(t) ?? []) {
      const s = tr.bytes / spec.streamingMemoryBandwidth + (tr.gatheredBytes ?? 0) / collectiveBandwidth(spec);
      if (tr.when === 'before') streamIn[tr.ipu]! += s;
      else streamOut[tr.ipu]! += s;
      if (!tr.overlapsCompute) overlapping[tr.ipu] = false;
    }
    const busy = this.allIpus.map((ipu) => {
      const c = costs[ipu]!;
      const working = c.hostIn + c.exchange + c.compute + c.sync + c.toHost + c.hostSync + c.fromHost + c.hostOut;
      const streaming = streamIn[ipu]! + streamOut[ipu]!;
      return overlapping[ipu] ? Math.max(working, streaming) : working + streaming;
    });
    return { costs, streamIn, streamOut, overlapping, busy, length: Math.max(...busy) };
  }

  private costs(step: ScheduleStep): StepWork[] {
    const signature = step.work.map((w) => w.unit).join(',');
    const known = this.stepCosts.get(signature);
    if (known) return known;
    const { request } = this;
    const costs = this.allIpus.map(() => ({ compute: 0, exchange: 0, sync: 0, toHost: 0, hostSync: 0, fromHost: 0, hostIn: 0, hostOut: 0 }));
    for (const w of step.work) {
      for (const ipu of this.allIpus) {
        this.addWork(request.recomputation?.unitNodes.get(w.unit) ?? [], ipu, costs[ipu]!);
        this.addWork(this.unitNodes[w.unit]!, ipu, costs[ipu]!);
      }
      for (const tr of request.hostTransfers) {
        if (tr.unit !== w.unit || !this.stepped(tr)) continue;
        const share = tr.bytes / (request.scheduleRuns * request.schedule.microBatches) / request.spec.hostLinkBandwidth;
        costs[tr.ipu]![tr.direction === 'in' ? 'hostIn' : 'hostOut'] += share;
      }
    }
    this.stepCosts.set(signature, costs);
    return costs;
  }

  /** Adds to `acc` the work of those of `nodes` that run on `ipu`. */
  private addWork(nodes: readonly number[], ipu: number, acc: StepWork): void {
    const { spec } = this.request;
    const seconds = (cycles: number) => cycles / spec.clockHz;
    for (const nodeId of nodes) {
      if (this.ipuOfNode(nodeId) !== ipu) continue;
      const cost = this.request.nodeCosts[nodeId]!;
      acc.compute += seconds(cost.compute);
      acc.exchange += seconds(cost.exchange) + this.copySeconds[nodeId]!;
      acc.sync += seconds(cost.sync);
      if (cost.host) {
        acc.toHost += seconds(cost.host.toHost);
        acc.hostSync += hostSyncSeconds(spec);
        acc.fromHost += seconds(cost.host.fromHost);
      }
    }
  }
}

/**
 * The timeline as it is laid out: its segments, the clock, and each IPU's
 * seconds by kind, summed also into the stretches being summed to be
 * repeated.
 */
class TimelineLayout {
  readonly segments: TimelineSegment[] = [];
  /** Seconds of each kind on each IPU, summed as segments are laid out. */
  readonly totals: Array<Map<SegmentKind, number>>;
  readonly repeated: RepeatedStretch[] = [];
  /** The stretches being summed to be repeated, innermost last. */
  private readonly stretches: Stretch[] = [];
  now = 0;
  scheduleTime = 0;
  scheduleBusy = 0;

  constructor(private readonly ipuCount: number) {
    this.totals = Array.from({ length: ipuCount }, () => new Map<SegmentKind, number>());
  }

  /** Lays out a segment of `length` seconds (none when it is empty). */
  push(ipu: number, kind: SegmentKind, start: number, length: number, label: string): void {
    if (length <= 0) return;
    this.segments.push({ ipu, kind, start, end: start + length, label });
    this.account(ipu, kind, length);
  }

  /** Counts `seconds` of schedule steps' busy time. */
  addBusy(seconds: number): void {
    this.scheduleBusy += seconds;
    for (const stretch of this.stretches) stretch.scheduleBusy += seconds;
  }

  /** Moves the clock on by `time`, of which `length` is schedule steps' length. */
  advance(time: number, length: number): void {
    this.now += time;
    this.scheduleTime += length;
    for (const stretch of this.stretches) {
      stretch.time += time;
      stretch.scheduleTime += length;
    }
  }

  /** Starts summing a stretch to repeat. */
  begin(): Stretch {
    const stretch = { time: 0, scheduleTime: 0, scheduleBusy: 0, totals: Array.from({ length: this.ipuCount }, () => new Map<SegmentKind, number>()) };
    this.stretches.push(stretch);
    return stretch;
  }

  /** Ends `stretch` (the innermost) and repeats it `times` more times without laying it out again: the same time, the same work. */
  repeat(stretch: Stretch, times: number, what: string): void {
    this.stretches.pop();
    if (times <= 0) return;
    const start = this.now;
    for (let ipu = 0; ipu < this.ipuCount; ipu++) {
      for (const [kind, seconds] of stretch.totals[ipu]!) this.account(ipu, kind, times * seconds);
    }
    this.addBusy(times * stretch.scheduleBusy);
    this.advance(times * stretch.time, times * stretch.scheduleTime);
    this.repeated.push({ start, end: this.now, times, what });
  }

  /** Seconds of `kind` on `ipu` so far. */
  total(ipu: number, kind: SegmentKind): number {
    return this.totals[ipu]!.get(kind) ?? 0;
  }

  private account(ipu: number, kind: SegmentKind, seconds: number): void {
    this.totals[ipu]!.set(kind, (this.totals[ipu]!.get(kind) ?? 0) + seconds);
    for (const stretch of this.stretches) stretch.totals[ipu]!.set(kind, (stretch.totals[ipu]!.get(kind) ?? 0) + seconds);
  }
}

/** The labels of the work each IPU runs in `step` (`F1:3`: the forward part of stage 1 on micro-batch 3). */
function stepLabels(placement: Placement, step: ScheduleStep): string[][] {
  const labels = Array.from({ length: placement.ipusPerReplica }, () => [] as string[]);
  for (const w of step.work) {
    const unit = placement.units[w.unit]!;
    unit.stages.forEach((stage, i) => labels[unit.ipus[i]!]!.push(`${unit.pass === 'forward' ? 'F' : 'B'}${stage}:${w.microBatch}`));
  }
  return labels;
}

/** Lays out one schedule step on each IPU: streaming, host transfers, exchange, compute, syncs, CPU ops, then the IPUs' sync. */
function layOutStep(layout: TimelineLayout, timing: StepTiming, labels: readonly string[][], syncTime: number): void {
  const { costs, streamIn, streamOut, overlapping, busy, length } = timing;
  const now = layout.now;
  for (let ipu = 0; ipu < costs.length; ipu++) {
    const c = costs[ipu]!;
    let at = now;
    const lay = (kind: SegmentKind, seconds: number, label: string) => {
      layout.push(ipu, kind, at, seconds, label);
      at += seconds;
    };
    if (!overlapping[ipu]) lay('streaming', streamIn[ipu]!, 'load');
    else layout.push(ipu, 'streaming', at, streamIn[ipu]! + streamOut[ipu]!, 'streaming');
    lay('host', c.hostIn, 'host → device');
    lay('exchange', c.exchange, 'exchange');
    lay('compute', c.compute, labels[ipu]!.join(' '));
    lay('sync', c.sync, 'tile syncs');
    lay('host', c.toHost, 'device → host (CPU op)');
    lay('sync', c.hostSync, 'host sync (CPU op)');
    lay('host', c.fromHost, 'host → device (CPU op)');
    lay('host', c.hostOut, 'device → host');
    if (!overlapping[ipu]) layout.push(ipu, 'streaming', at, streamOut[ipu]!, 'store');
    layout.push(ipu, 'sync', now + length, syncTime, 'sync');
    layout.addBusy(busy[ipu]!);
  }
  layout.advance(length + syncTime, length);
}

/**
 * Lays out one run of the schedule, then (training) the weight update. The
 * steps a listed schedule leaves out (see Schedule.listedMicroBatches) repeat
 * the last steady-state step of a pipeline, or the steps of the last listed
 * micro-batch.
 */
function layOutRun(request: TimelineRequest, storage: TensorStorage, layout: TimelineLayout, timings: StepTimings): void {
  const { schedule, placement, spec } = request;
  const accumulationLoop = overlappedLoop(request, 'OverlapAccumulationLoop');
  const loopStart = enterOverlappedLoop(layout, accumulationLoop);
  const syncTime = placement.ipusPerReplica * request.replicationFactor > 1 ? ipuSyncSeconds(spec, placement.ipusReserved) : 0;
  const listed = schedule.listedMicroBatches ?? schedule.microBatches;
  const lastSteady = schedule.steps.reduce((last, step, t) => (step.ramp === 'steady' ? t : last), -1);
  const repeatAfter = listed < schedule.microBatches ? (schedule.pipelineStages ? lastSteady : schedule.steps.length - 1) : -1;
  const repeatFrom = repeatAfter < 0 || schedule.pipelineStages ? repeatAfter : schedule.steps.findIndex((step) => step.work.some((w) => w.microBatch === listed - 1));
  let period: Stretch | undefined;
  schedule.steps.forEach((step, t) => {
    if (t === repeatFrom) period = layout.begin();
    layOutStep(layout, timings.of(step, t), stepLabels(placement, step), syncTime);
    if (t === repeatAfter && period) {
      const what = schedule.pipelineStages ? 'the steady-state step' : 'the steps of a micro-batch';
      layout.repeat(period, schedule.microBatches - listed, `${what}, for micro-batches ${listed} to ${schedule.microBatches - 1}`);
    }
  });
  leaveOverlappedLoop(layout, accumulationLoop, loopStart);
  if (request.training)
    layout.advance(
      weightUpdate(request, storage, layout.now, (...args) => layout.push(...args)),
      0,
    );
}

/** What each IPU did over the call of length `duration`. */
function ipuActivities(layout: TimelineLayout, ipuCount: number, duration: number): IpuActivity[] {
  return Array.from({ length: ipuCount }, (_, ipu) => {
    const total = (kind: SegmentKind) => layout.total(ipu, kind);
    const activity = {
      compute: total('compute'),
      exchange: total('exchange'),
      streaming: total('streaming'),
      sync: total('sync'),
      host: total('host'),
      collective: total('all-reduce') + total('update'),
    };
    const busyTime = Object.values(activity).reduce((a, b) => a + b, 0);
    return { ipu, ...activity, idle: Math.max(0, duration - busyTime), utilization: duration > 0 ? activity.compute / duration : 0 };
  });
}

/** Simulates one call. */
export function simulateTimeline(request: TimelineRequest): Timeline {
  const { placement, schedule, spec } = request;
  const storage = request.storage ?? ON_CHIP_STORAGE;
  const ipuCount = placement.ipusPerReplica;
  const layout = new TimelineLayout(ipuCount);
  const timings = new StepTimings(request);
  const hostIn = hostSecondsOutsideSteps(request, 'in');
  const hostOut = hostSecondsOutsideSteps(request, 'out');
  for (let ipu = 0; ipu < ipuCount; ipu++) layout.push(ipu, 'host', layout.now, hostIn[ipu]!, 'host → device');
  layout.advance(Math.max(...hostIn), 0);
  const deviceIterationLoop = overlappedLoop(request, 'OverlapDeviceIterationLoop');
  const loopStart = enterOverlappedLoop(layout, deviceIterationLoop);
  // Runs after the first are laid out too when the timeline stays small; else they repeat the first.
  if (request.scheduleRuns * schedule.steps.length <= MAX_LISTED_WORK) {
    for (let run = 0; run < request.scheduleRuns; run++) layOutRun(request, storage, layout, timings);
  } else {
    const firstRun = layout.begin();
    layOutRun(request, storage, layout, timings);
    layout.repeat(firstRun, request.scheduleRuns - 1, `the first device iteration, for device iterations 1 to ${request.scheduleRuns - 1}`);
  }
  leaveOverlappedLoop(layout, deviceIterationLoop, loopStart);
  for (let ipu = 0; ipu < ipuCount; ipu++) layout.push(ipu, 'host', layout.now, hostOut[ipu]!, 'device → host');
  layout.advance(Math.max(...hostOut), 0);
  const duration = layout.now;
  const scheduleCapacity = layout.scheduleTime * ipuCount;
  return {
    segments: layout.segments,
    duration,
    cycles: Math.round(duration * spec.clockHz),
    ipus: ipuActivities(layout, ipuCount, duration),
    throughput: duration > 0 ? request.samplesPerCall / duration : 0,
    bubbleFraction: scheduleCapacity > 0 ? 1 - layout.scheduleBusy / scheduleCapacity : 0,
    ...(layout.repeated.length > 0 ? { repeated: layout.repeated } : {}),
  };
}

/**
 * The end of a training step on each IPU: gradient reduction across the
 * replicas, loading off-chip optimizer state, the update, and storing the
 * state back. Returns its length: the slowest IPU's, or under the `Serial`
 * schedule the IPUs' one after another.
 */
function weightUpdate(
  request: TimelineRequest,
  storage: TensorStorage,
  start: number,
  push: (ipu: number, kind: SegmentKind, start: number, length: number, label: string) => void,
): number {
  const { graph, placement, spec } = request;
  const R = request.replicationFactor;
  const ipuCount = placement.ipusPerReplica;
  const tiles = spec.tiles - storage.ioTiles;
  const ipuOfNode = (node: Node) => placement.stages[placement.nodeStages[node.id]!]!.ipu;
  const weightIpu = new Map<number, number>();
  for (const node of graph.nodes) {
    for (const id of node.inputs) {
      const source = graph.values[id]!.source;
      if (source.kind === 'param' && request.trainedWeights.has(source.name) && !weightIpu.has(id)) weightIpu.set(id, ipuOfNode(node));
    }
  }
  const gradientBytes = new Array<number>(ipuCount).fill(0);
  const updatedElements = new Array<number>(ipuCount).fill(0);
  const stateBytes = new Array<number>(ipuCount).fill(0);
  const slotBytes = request.optimizerSlotBytes.reduce((a, b) => a + b, 0);
  for (const [id, ipu] of weightIpu) {
    const elements = sizeOf(graph.values[id]!.shape);
    const shard = shardFraction(storage.optimizer, elements, R);
    gradientBytes[ipu]! += valueBytes(graph, id);
    updatedElements[ipu]! += elements * shard;
    if (isOffChip(storage.optimizer, elements)) stateBytes[ipu]! += elements * slotBytes * shard;
  }
  // An update reads the gradient, the weight and each state tensor and writes the weight and the state: a few vector operations each.
  const cyclesPerElement = 1.5 * (2 + 3 * request.optimizerSlotBytes.length);
  const serial = request.weightUpdateSchedule === 'Serial';
  let longest = 0;
  let at = start;
  for (let ipu = 0; ipu < ipuCount; ipu++) {
    const reduce = R > 1 ? (((2 * (R - 1)) / R) * gradientBytes[ipu]!) / collectiveBandwidth(spec) : 0;
    const load = stateBytes[ipu]! / spec.streamingMemoryBandwidth;
    const update = updatedElements[ipu]! > 0 ? (ELEMENTWISE_VERTEX_CYCLES + Math.ceil(updatedElements[ipu]! / tiles) * cyclesPerElement) / spec.clockHz : 0;
    push(ipu, 'all-reduce', at, reduce, R > 1 && storage.optimizer.sharded ? 'gradient reduce-scatter and weight all-gather' : 'gradient all-reduce');
    push(ipu, 'streaming', at + reduce, load, 'optimizer state load');
    push(ipu, 'update', at + reduce + load, update, 'optimizer');
    push(ipu, 'streaming', at + reduce + load + update, load, 'optimizer state store');
    const length = reduce + 2 * load + update;
    longest = Math.max(longest, length);
    if (serial) at += length;
  }
  return serial ? at - start : longest;
}
