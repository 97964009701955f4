/**
 * What the simulated hardware makes of a compiled model: the cost of each
 * kernel on its IPU, the memory of each IPU (and whether it fits) and the
 * timeline of one call.
 */
import type { Graph, Node } from '../ir/graph.js';
import type { Placement } from '../strategy/placement.js';
import type { WeightUpdateSchedule } from '../strategy/compiler_defaults.js';
import { planRecomputation, type RecomputationPlan, type RecomputationType } from '../strategy/recomputation.js';
import { buildSchedule, periodicMicroBatches, type Schedule } from '../strategy/schedule.js';
import type { StreamingTransfer } from './streaming_transfers.js';
import { hostTransfers, type HostSyncPattern, type HostTransfer } from './host_io.js';
import { ipuKernelTarget, kernelCost, type KernelCost, type KernelTarget } from './kernel_cycles.js';
import { withMultiConvGroups } from './multi_conv_cost.js';
import { convolutionWeightsPerTile } from './conv_dithering.js';
import { memoryPlan, type MemoryPlan, type OptimizerSlot, type StatePrecision } from './memory_plan.js';
import type { IpuTargetSpec } from './target_spec.js';
import { ON_CHIP_STORAGE, type TensorStorage } from './tensor_storage.js';
import { simulateTimeline, type Timeline } from './timeline.js';

/** Temporary memory a matmul or convolution may take by default, as a fraction of a tile's memory (Poplar's default). */
export const DEFAULT_AVAILABLE_MEMORY_PROPORTION = 0.6;

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
  /** Micro-batches whose outputs each replica sends back to the host per call (the output mode's). */
  readonly returnedMicroBatches: number;
  readonly trainedWeights: ReadonlySet<string>;
  /** The state tensors the optimizer keeps per trained weight (their precision sets their size). */
  readonly optimizerSlots: readonly OptimizerSlot[];
  /** The precision gradients are accumulated in (default: the weight's own). */
  readonly accumulatorPrecision?: StatePrecision;
  /** Whether gradients are accumulated in a tensor of their own, not in the optimizer state (default true). */
  readonly separateAccumulator?: boolean;
  /** How the weight updates after gradient accumulation are ordered over the IPUs (default `Scheduler`: in parallel). */
  readonly weightUpdateSchedule?: WeightUpdateSchedule;
  /** Temporary memory proportion of matmuls and convolutions, by IPU (default {@link DEFAULT_AVAILABLE_MEMORY_PROPORTION}). */
  readonly availableMemoryProportion: Readonly<Record<number, number>>;
  /** Matrix products in float16 accumulate in float16 (default: float32). */
  readonly halfPartials?: boolean;
  /** Where each kind of tensor lives (default: everything on chip). */
  readonly storage?: TensorStorage;
  /** Which activations a training step recomputes (default `None`). */
  readonly recomputation?: RecomputationType;
  /** The name reports give each parameter, by parameter name (default: its own). */
  readonly weightNames?: ReadonlyMap<string, string>;
  /**
   * The anchored values (`Options.anchorTensor`), the last graph outputs, in
   * order: how many micro-batches' values each replica sends back per call
   * (their own output mode's). Default none.
   */
  readonly anchoredOutputs?: readonly { readonly returnedMicroBatches: number }[];
  /** Inputs made on the device and outputs not copied back: no host transfer (default false). */
  readonly syntheticData?: boolean;
  /** How the IPUs synchronise with the host (`Options.syncPattern`; default `Full`). */
  readonly syncPattern?: HostSyncPattern;
}

/**
 * A schedule with the same memory peak as `schedule`, over few enough
 * micro-batches to walk quickly: {@link periodicMicroBatches} hold every
 * state the full one reaches.
 */
function peakSchedule(schedule: Schedule, placement: Placement, training: boolean): Schedule {
  const enough = periodicMicroBatches(placement, training);
  return schedule.microBatches > enough ? buildSchedule(placement, training, enough) : schedule;
}

/** The host transfers of one call (none with synthetic data). */
function callHostTransfers(request: HardwareRequest): HostTransfer[] {
  return request.syntheticData
    ? []
    : hostTransfers(request.graph, request.placement, {
        microBatchesPerReplica: request.microBatchesPerReplica,
        returnedMicroBatches: request.returnedMicroBatches,
        anchoredOutputs: request.anchoredOutputs ?? [],
      });
}

/**
 * Bytes the I/O tiles of each IPU hold for the host transfers that overlap
 * compute: each marked input or output is double-buffered, one micro-batch's
 * value in use while the next one's moves, as PopART's overlapped exchange
 * carries two values through its loops (the `OverlapInnerLoop` diagram of
 * popart's ExchangeStrategy docs).
 */
function ioTileBuffers(transfers: readonly HostTransfer[], ipuCount: number, microBatchesPerReplica: number): number[] {
  const bytes = new Array<number>(ipuCount).fill(0);
  for (const tr of transfers) if (tr.overlap && tr.perMicroBatch) bytes[tr.ipu]! += (2 * tr.bytes) / microBatchesPerReplica;
  return bytes;
}

/** What each node runs on: its IPU's tiles (less the I/O tiles), their memory and its available proportion, the IPU's arithmetic and host link. */
function kernelTargets(request: HardwareRequest, storage: TensorStorage): (node: Node) => KernelTarget {
  const { placement, spec } = request;
  const tiles = spec.tiles - storage.ioTiles;
  const halfPartials = request.halfPartials ?? false;
  return (node) =>
    ipuKernelTarget(spec, {
      tiles,
      availableMemoryProportion: request.availableMemoryProportion[placement.stages[placement.nodeStages[node.id]!]!.ipu] ?? DEFAULT_AVAILABLE_MEMORY_PROPORTION,
      halfPartials,
    });
}

/** The cost of each node on its IPU, the convolutions of a multi-convolution planned as a group. */
function nodeCostsOf(request: HardwareRequest, storage: TensorStorage): KernelCost[] {
  const { graph, placement } = request;
  const targetOf = kernelTargets(request, storage);
  const kernelCosts = graph.nodes.map((node) => kernelCost(graph, node, targetOf(node)));
  return withMultiConvGroups(graph, kernelCosts, (node) => placement.nodeUnits[node.id]!, targetOf);
}

/** The memory of each IPU at its peak, the I/O tiles' buffers of `transfers` and the convolution weights on the fullest tile. */
function plannedMemory(
  request: HardwareRequest,
  storage: TensorStorage,
  nodeCosts: readonly KernelCost[],
  recomputation: RecomputationPlan,
  transfers: readonly HostTransfer[],
): MemoryPlan {
  const { graph, placement } = request;
  const plan = memoryPlan({
    graph,
    placement,
    schedule: peakSchedule(request.schedule, placement, request.training),
    spec: request.spec,
    training: request.training,
    gradientAccumulation: request.gradientAccumulation,
    optimizerSlots: request.optimizerSlots,
    ...(request.accumulatorPrecision ? { accumulatorPrecision: request.accumulatorPrecision } : {}),
    ...(request.separateAccumulator === false ? { separateAccumulator: false } : {}),
    trainedWeights: request.trainedWeights,
    storage,
    kernelTemporary: (node) => nodeCosts[node.id]!.temporaryBytes,
    recomputation,
    weightNames: request.weightNames,
    ioTileBuffers: ioTileBuffers(transfers, placement.ipusPerReplica, request.microBatchesPerReplica),
  });
  const ipuOf = (node: Node) => placement.stages[placement.nodeStages[node.id]!]!.ipu;
  const weightsPerTile = convolutionWeightsPerTile(graph, nodeCosts, ipuOf, placement.ipusPerReplica, request.spec.tiles - storage.ioTiles, request.training);
  return { ...plan, ipus: plan.ipus.map((m) => ({ ...m, convolutionWeightsPerTile: weightsPerTile[m.ipu]! })) };
}

/** The timeline of one call: the schedule's runs, the host transfers and syncs, the weight updates. */
function callTimeline(
  request: HardwareRequest,
  storage: TensorStorage,
  nodeCosts: readonly KernelCost[],
  recomputation: RecomputationPlan,
  transfers: readonly HostTransfer[],
): Timeline {
  const { graph, placement } = request;
  return simulateTimeline({
    graph,
    placement,
    schedule: request.schedule,
    transfers: request.transfers,
    spec: request.spec,
    nodeCosts,
    training: request.training,
    scheduleRuns: request.training ? request.deviceIterations : 1,
    replicationFactor: request.replicationFactor,
    samplesPerCall: request.samplesPerCall,
    hostTransfers: transfers,
    syncPattern: request.syncPattern ?? 'Full',
    trainedWeights: request.trainedWeights,
    optimizerSlotBytes: request.optimizerSlots.map((slot) => (slot.precision === 'float16' ? 2 : 4)),
    storage,
    recomputation,
    weightUpdateSchedule: request.weightUpdateSchedule ?? 'Scheduler',
  });
}

/** Analyses a placed and scheduled graph on its target. */
export function analyseHardware(request: HardwareRequest): HardwareAnalysis {
  const storage = request.storage ?? ON_CHIP_STORAGE;
  const type = request.training ? (request.recomputation ?? 'None') : 'None';
  const recomputation = planRecomputation(request.graph, request.placement, type);
  const nodeCosts = nodeCostsOf(request, storage);
  const transfers = callHostTransfers(request);
  const memory = plannedMemory(request, storage, nodeCosts, recomputation, transfers);
  const timeline = callTimeline(request, storage, nodeCosts, recomputation, transfers);
  const rerunNodes = [...recomputation.unitNodes.values()].reduce((n, nodes) => n + nodes.length, 0);
  return {
    spec: request.spec,
    memory,
    timeline,
    ...(type !== 'None' ? { recomputation: { type, values: recomputation.recomputed.size, rerunNodes } } : {}),
  };
}
