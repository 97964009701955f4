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
 *   bandwidth (host_io.ts), before and after the schedule, or
 *   alongside it when the IPUs have I/O tiles. Under the `Full` sync pattern
 *   every IPU waits for all of it; under `SinglePipeline` only the IPU that
 *   reads or produces a value does, and, without I/O tiles, each
 *   micro-batch's share moves in the step that reads or produces it, so the
 *   step lasts max over IPUs of (transfers + work) ({@link HostSyncPattern}).
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

/** Simulates one call. */
export function simulateTimeline(request: TimelineRequest): Timeline {
  const { graph, placement, schedule, spec } = request;
  const storage = request.storage ?? ON_CHIP_STORAGE;
  const R = request.replicationFactor;
  const ipuCount = placement.ipusPerReplica;
  const ipuOfNode = (node: number) => placement.stages[placement.nodeStages[node]!]!.ipu;
  const seconds = (cycles: number) => cycles / spec.clockHz;
  const unitNodes = placement.units.map(() => [] as number[]);
  graph.nodes.forEach((n) => unitNodes[placement.nodeUnits[n.id]!]!.push(n.id));

  // Seconds each node spends receiving values from other IPUs (its first reader on an IPU pays for the copy).
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

  const segments: TimelineSegment[] = [];
  // Seconds of each kind on each IPU, summed as segments are laid out.
  const totals = Array.from({ length: ipuCount }, () => new Map<SegmentKind, number>());
  // The stretches being summed to be repeated, innermost last.
  const stretches: Stretch[] = [];
  const account = (ipu: number, kind: SegmentKind, seconds: number) => {
    totals[ipu]!.set(kind, (totals[ipu]!.get(kind) ?? 0) + seconds);
    for (const stretch of stretches) stretch.totals[ipu]!.set(kind, (stretch.totals[ipu]!.get(kind) ?? 0) + seconds);
  };
  const push = (ipu: number, kind: SegmentKind, start: number, length: number, label: string) => {
    if (length <= 0) return;
    segments.push({ ipu, kind, start, end: start + length, label });
    account(ipu, kind, length);
  };
  // The streaming transfers of each step.
  const transfersOfStep = new Map<number, StreamingTransfer[]>();
  for (const tr of request.transfers) {
    const ofStep = transfersOfStep.get(tr.step);
    if (ofStep) ofStep.push(tr);
    else transfersOfStep.set(tr.step, [tr]);
  }
  const allIpus = Array.from({ length: ipuCount }, (_, i) => i);
  const overlapHost = storage.ioTiles > 0;
  let now = 0;
  let scheduleTime = 0;
  let scheduleBusy = 0;
  const repeated: RepeatedStretch[] = [];
  const addBusy = (seconds: number) => {
    scheduleBusy += seconds;
    for (const stretch of stretches) stretch.scheduleBusy += seconds;
  };
  /** Moves the clock on by `time`, of which `length` is schedule steps' length. */
  const advance = (time: number, length: number) => {
    now += time;
    scheduleTime += length;
    for (const stretch of stretches) {
      stretch.time += time;
      stretch.scheduleTime += length;
    }
  };

  // Host transfers outside the steps, in seconds by IPU: under Full every IPU waits for all of them.
  const single = request.syncPattern === 'SinglePipeline';
  const stepped = (tr: HostTransfer) => single && !overlapHost && tr.perMicroBatch;
  const hostSeconds = (direction: HostTransfer['direction']) =>
    allIpus.map(
      (ipu) =>
        request.hostTransfers.filter((tr) => tr.direction === direction && !stepped(tr) && (!single || tr.ipu === ipu)).reduce((a, tr) => a + tr.bytes, 0) /
        spec.hostLinkBandwidth,
    );
  const hostIn = hostSeconds('in');
  const hostOut = hostSeconds('out');
  for (const ipu of allIpus) push(ipu, 'host', now, hostIn[ipu]!, 'host → device');
  if (!overlapHost) now += Math.max(...hostIn);

  const syncTime = ipuCount * R > 1 ? ipuSyncSeconds(spec, placement.ipusReserved) : 0;
  const work = (nodes: readonly number[], ipu: number, acc: StepWork) => {
    for (const nodeId of nodes) {
      if (ipuOfNode(nodeId) !== ipu) continue;
      const cost = request.nodeCosts[nodeId]!;
      acc.compute += seconds(cost.compute);
      acc.exchange += seconds(cost.exchange) + copySeconds[nodeId]!;
      acc.sync += seconds(cost.sync);
      if (cost.host) {
        acc.toHost += seconds(cost.host.toHost);
        acc.hostSync += hostSyncSeconds(spec);
        acc.fromHost += seconds(cost.host.fromHost);
      }
    }
  };
  // Steps with the same units (the steady state of a pipeline) take the same time.
  const stepCosts = new Map<string, StepWork[]>();
  const timing = (step: ScheduleStep, t: number): StepTiming => {
    const signature = step.work.map((w) => w.unit).join(',');
    let costs = stepCosts.get(signature);
    if (!costs) {
      costs = allIpus.map(() => ({ compute: 0, exchange: 0, sync: 0, toHost: 0, hostSync: 0, fromHost: 0, hostIn: 0, hostOut: 0 }));
      for (const w of step.work) {
        for (const ipu of allIpus) {
          work(request.recomputation?.unitNodes.get(w.unit) ?? [], ipu, costs[ipu]!);
          work(unitNodes[w.unit]!, ipu, costs[ipu]!);
        }
        for (const tr of request.hostTransfers) {
          if (tr.unit !== w.unit || !stepped(tr)) continue;
          const share = tr.bytes / (request.scheduleRuns * schedule.microBatches) / spec.hostLinkBandwidth;
          costs[tr.ipu]![tr.direction === 'in' ? 'hostIn' : 'hostOut'] += share;
        }
      }
      stepCosts.set(signature, costs);
    }
    const streamIn = new Array<number>(ipuCount).fill(0);
    const streamOut = new Array<number>(ipuCount).fill(0);
    const overlapping = new Array<boolean>(ipuCount).fill(true);
    for (const tr of transfersOfStep.get(t) ?? []) {
      const s = tr.bytes / spec.streamingMemoryBandwidth + (tr.gatheredBytes ?? 0) / collectiveBandwidth(spec);
      if (tr.when === 'before') streamIn[tr.ipu]! += s;
      else streamOut[tr.ipu]! += s;
      if (!tr.overlapsCompute) overlapping[tr.ipu] = false;
    }
    const busy = allIpus.map((ipu) => {
      const c = costs[ipu]!;
      const working = c.hostIn + c.exchange + c.compute + c.sync + c.toHost + c.hostSync + c.fromHost + c.hostOut;
      const streaming = streamIn[ipu]! + streamOut[ipu]!;
      return overlapping[ipu] ? Math.max(working, streaming) : working + streaming;
    });
    return { costs, streamIn, streamOut, overlapping, busy, length: Math.max(...busy) };
  };
  const layOut = (step: ScheduleStep, t: number) => {
    const { costs, streamIn, streamOut, overlapping, busy, length } = timing(step, t);
    const labels = allIpus.map(() => [] as string[]);
    for (const w of step.work) {
      const unit = placement.units[w.unit]!;
      unit.stages.forEach((stage, i) => labels[unit.ipus[i]!]!.push(`${unit.pass === 'forward' ? 'F' : 'B'}${stage}:${w.microBatch}`));
    }
    for (const ipu of allIpus) {
      const c = costs[ipu]!;
      let at = now;
      if (!overlapping[ipu]) {
        push(ipu, 'streaming', at, streamIn[ipu]!, 'load');
        at += streamIn[ipu]!;
      } else {
        push(ipu, 'streaming', at, streamIn[ipu]! + streamOut[ipu]!, 'streaming');
      }
      push(ipu, 'host', at, c.hostIn, 'host → device');
      at += c.hostIn;
      push(ipu, 'exchange', at, c.exchange, 'exchange');
      at += c.exchange;
      push(ipu, 'compute', at, c.compute, labels[ipu]!.join(' '));
      at += c.compute;
      push(ipu, 'sync', at, c.sync, 'tile syncs');
      at += c.sync;
      push(ipu, 'host', at, c.toHost, 'device → host (CPU op)');
      at += c.toHost;
      push(ipu, 'sync', at, c.hostSync, 'host sync (CPU op)');
      at += c.hostSync;
      push(ipu, 'host', at, c.fromHost, 'host → device (CPU op)');
      at += c.fromHost;
      push(ipu, 'host', at, c.hostOut, 'device → host');
      at += c.hostOut;
      if (!overlapping[ipu]) push(ipu, 'streaming', at, streamOut[ipu]!, 'store');
      push(ipu, 'sync', now + length, syncTime, 'sync');
      addBusy(busy[ipu]!);
    }
    advance(length + syncTime, length);
  };
  /** Starts summing a stretch to repeat. */
  const begin = (): Stretch => {
    const stretch = { time: 0, scheduleTime: 0, scheduleBusy: 0, totals: allIpus.map(() => new Map<SegmentKind, number>()) };
    stretches.push(stretch);
    return stretch;
  };
  /** Ends `stretch` (the innermost) and repeats it `times` more times without laying it out again: the same time, the same work. */
  const repeat = (stretch: Stretch, times: number, what: string) => {
    stretches.pop();
    if (times <= 0) return;
    const start = now;
    allIpus.forEach((ipu) => {
      for (const [kind, seconds] of stretch.totals[ipu]!) account(ipu, kind, times * seconds);
    });
    addBusy(times * stretch.scheduleBusy);
    advance(times * stretch.time, times * stretch.scheduleTime);
    repeated.push({ start, end: now, times, what });
  };
  // The steps a listed schedule leaves out (see Schedule.listedMicroBatches) repeat the last steady-state step of a
  // pipeline, or the steps of the last listed micro-batch.
  const listed = schedule.listedMicroBatches ?? schedule.microBatches;
  const lastSteady = schedule.steps.reduce((last, step, t) => (step.ramp === 'steady' ? t : last), -1);
  const repeatAfter = listed < schedule.microBatches ? (schedule.pipelineStages ? lastSteady : schedule.steps.length - 1) : -1;
  const repeatFrom = repeatAfter < 0 || schedule.pipelineStages ? repeatAfter : schedule.steps.findIndex((step) => step.work.some((w) => w.microBatch === listed - 1));
  const layOutRun = () => {
    let period: Stretch | undefined;
    schedule.steps.forEach((step, t) => {
      if (t === repeatFrom) period = begin();
      layOut(step, t);
      if (t === repeatAfter && period) {
        const what = schedule.pipelineStages ? 'the steady-state step' : 'the steps of a micro-batch';
        repeat(period, schedule.microBatches - listed, `${what}, for micro-batches ${listed} to ${schedule.microBatches - 1}`);
      }
    });
    if (request.training) advance(weightUpdate(request, storage, now, push), 0);
  };
  // Runs after the first are laid out too when the timeline stays small; else they repeat the first.
  if (request.scheduleRuns * schedule.steps.length <= MAX_LISTED_WORK) {
    for (let run = 0; run < request.scheduleRuns; run++) layOutRun();
  } else {
    const firstRun = begin();
    layOutRun();
    repeat(firstRun, request.scheduleRuns - 1, `the first device iteration, for device iterations 1 to ${request.scheduleRuns - 1}`);
  }
  // With I/O tiles the host transfers run alongside the schedule; without, after it.
  const scheduleEnd = now;
  for (const ipu of allIpus) {
    const outAt = overlapHost ? Math.max(hostIn[ipu]!, scheduleEnd - hostOut[ipu]!) : scheduleEnd;
    push(ipu, 'host', outAt, hostOut[ipu]!, 'device → host');
    now = Math.max(now, outAt + hostOut[ipu]!);
  }

  const duration = now;
  const total = (ipu: number, kind: SegmentKind) => totals[ipu]!.get(kind) ?? 0;
  const ipus: IpuActivity[] = allIpus.map((ipu) => {
    const activity = {
      compute: total(ipu, 'compute'),
      exchange: total(ipu, 'exchange'),
      streaming: total(ipu, 'streaming'),
      sync: total(ipu, 'sync'),
      host: total(ipu, 'host'),
      collective: total(ipu, 'all-reduce') + total(ipu, 'update'),
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
    ...(repeated.length > 0 ? { repeated } : {}),
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
