/**
 * What each simulated IPU holds, and whether it fits.
 *
 * Always live (for the whole run):
 * - weights: the parameters and constants its nodes read (two bytes an
 *   element in float16), or, when parameters live off chip, the largest set
 *   of them one schedule step loads (constants are part of the program and
 *   stay on chip; the fills tfjs's gradient functions make take none, see
 *   {@link backwardFillConstants});
 * - optimizer state: each trained weight's state tensors, sharded over the
 *   replicas with replicated tensor sharding; off chip, only the state of the
 *   weight being updated is on chip;
 * - gradient accumulators (gradient accumulation above 1), in the
 *   optimizer's accumulation precision, unless the optimizer accumulates into
 *   its own state (PopART's SGD1: graphcore/popart willow/include/popart/sgd.hpp,
 *   "SGD1 as there is 1 extra optimiser tensor");
 * - code and exchange buffers: an estimate per kernel and tile, kernels
 *   that are the same (kernel, attributes, shapes) sharing their code, as
 *   PopART's outlining makes them.
 *
 * Not always live, at the peak of the schedule: the activations (values of
 * micro-batches, found by walking the schedule: each value lives from its
 * kernel, or its copy from another IPU, to its last reader on that IPU;
 * pipelining keeps the activations of micro-batches in flight; off-chip
 * activations leave the chip after the forward pass and come back for the
 * backward pass; recomputation keeps only the stored activations between the
 * passes and remakes the others just before they are read) plus the
 * temporary memory of the kernel running at that moment. Views (reshapes,
 * transposes, slices, ...) take no memory of their own but keep what they
 * look at alive; see {@link storageRoots}.
 *
 * Off-chip tensors are counted in the streaming memory of the IPU, which
 * has its own capacity.
 */
import { sizeOf, type Graph, type Node, type ValueId } from '../ir/graph.js';
import { valueBytes } from '../ir/node_cost.js';
import { isViewNode } from '../ir/value_views.js';
import { activationPeaks, type MemoryPeak, type PeakRequest } from './activation_peak.js';
import type { IpuTargetSpec } from './target_spec.js';
import { isOffChip, ON_CHIP_STORAGE, shardFraction, type TensorStorage } from './tensor_storage.js';

/** Estimated vertex code and control per kernel, per tile it is spread over, in bytes (≈ 29 KiB per kernel on a GC200). */
export const CODE_BYTES_PER_KERNEL_TILE = 20;

/** What makes two kernels the same code: the kernel, its attributes, and the shapes and types of what it reads and makes. */
function kernelSignature(graph: Graph, node: Node): string {
  const values = (ids: readonly ValueId[]) => ids.map((id) => `${graph.values[id]!.dtype}/${valueBytes(graph, id)}[${graph.values[id]!.shape.join(',')}]`).join(' ');
  return `${node.kernel}(${values(node.inputs)}) -> ${values(node.outputs)} ${JSON.stringify(node.attrs)}`;
}

/**
 * Adds to `signatures` the kernels whose code `node` puts on its IPU: none for
 * a view, one for a kernel; a control-flow node's control plus its bodies'
 * kernels. Kernels with the same signature share their code: PopART outlines
 * repeated parts of the graph into subgraphs that each run calls
 * (`SessionOptions::enableOutlining`, default true; graphcore/popart
 * willow/include/popart/sessionoptions.hpp), and an op outlines with the ops
 * of the same type, attributes, tensors and virtual graph (`Op::getSubgraphEquivId`).
 */
function addCodeKernels(graph: Graph, node: Node, signatures: Set<string>): void {
  if (isViewNode(graph, node) && !node.bodies) return;
  const bodies = (node.bodies ?? []).map((body) => body.nodes.map((inner) => kernelSignature(body, inner)).join(';'));
  signatures.add(`${kernelSignature(graph, node)}${bodies.length > 0 ? ` {${bodies.join('|')}}` : ''}`);
  for (const body of node.bodies ?? []) for (const inner of body.nodes) addCodeKernels(body, inner, signatures);
}
/** Exchange buffers, as a fraction of the peak activations of an IPU. */
export const EXCHANGE_BUFFER_FRACTION = 0.05;

/** The precision of an optimizer state tensor or accumulator: float32, float16 or the weight's own. */
export type StatePrecision = 'float32' | 'float16' | 'parameter';

/** An optimizer state tensor kept per weight. */
export interface OptimizerSlot {
  readonly precision: StatePrecision;
}

/** What kind of thing occupies memory. */
export type MemoryKind = 'weights' | 'optimizer state' | 'gradient accumulators' | 'activations' | 'temporary' | 'code and exchange';

/** What kind of thing can live in streaming memory. */
export type StreamedKind = 'weights' | 'optimizer state' | 'gradient accumulators' | 'activations';

export type { MemoryPeak } from './activation_peak.js';

/** One thing held by an IPU. */
export interface MemoryItem {
  readonly kind: MemoryKind;
  readonly name: string;
  readonly bytes: number;
}

/** The memory of one IPU. */
export interface IpuMemoryUse {
  readonly ipu: number;
  /** In-Processor memory the model may use: the tiles that are not I/O tiles. */
  readonly capacity: number;
  readonly used: number;
  /** Bytes by kind. */
  readonly byKind: Readonly<Record<MemoryKind, number>>;
  /** The items, largest first. */
  readonly items: readonly MemoryItem[];
  /** The activations and temporary memory at the peak, in detail. */
  readonly peak: MemoryPeak;
  /** What lives in the streaming memory of this IPU. */
  readonly streaming: { readonly bytes: number; readonly byKind: Readonly<Record<StreamedKind, number>> };
  /** The most bytes of convolution weights one tile holds (lib/ipu/conv_dithering.ts; absent when the plan was made without the kernels' plans). */
  readonly convolutionWeightsPerTile?: number;
  /** The I/O tiles (`numIOTiles`; absent without): their memory, and the buffers of the host transfers that overlap compute on them. */
  readonly ioTiles?: { readonly capacity: number; readonly hostBuffers: number };
}

/** The memory of every IPU of one replica. */
export interface MemoryPlan {
  readonly ipus: readonly IpuMemoryUse[];
  /** Streaming memory per IPU, bytes. */
  readonly streamingCapacity: number;
  /** Every IPU's In-Processor memory and streaming memory hold what they must. */
  readonly fits: boolean;
}

/** What the memory plan needs besides the placed graph. */
export interface MemoryRequest extends PeakRequest {
  readonly spec: IpuTargetSpec;
  /** The state tensors the optimizer keeps per trained weight (none for plain SGD, two moments for Adam). */
  readonly optimizerSlots: readonly OptimizerSlot[];
  /** The precision of gradient accumulators (default: the weight's own). */
  readonly accumulatorPrecision?: StatePrecision;
  /**
   * Whether gradients are accumulated in a tensor of their own (default
   * true); false when the optimizer accumulates them straight into its state
   * (SGD's combined variant, PopART's SGD1).
   */
  readonly separateAccumulator?: boolean;
  /** Where each kind of tensor lives (default: everything on chip). */
  readonly storage?: TensorStorage;
  /** Bytes per value, when some values are stored in fewer bytes than their dtype (fp16). */
  readonly valueBytes?: (id: ValueId) => number;
  /** The name the items of a parameter show, by parameter name (default: its own). */
  readonly weightNames?: ReadonlyMap<string, string>;
  /** Bytes of the buffers the I/O tiles of each IPU hold for the host transfers overlapping compute (default none). */
  readonly ioTileBuffers?: readonly number[];
}

const KINDS: MemoryKind[] = ['weights', 'optimizer state', 'gradient accumulators', 'activations', 'temporary', 'code and exchange'];
const STREAMED: StreamedKind[] = ['weights', 'optimizer state', 'gradient accumulators', 'activations'];

function bytesPerState(precision: StatePrecision, weightBytesPerElement: number): number {
  return precision === 'parameter' ? weightBytesPerElement : precision === 'float16' ? 2 : 4;
}

/** What the steps of a memory plan share: the placed graph, where tensors live, and what each IPU holds so far. */
interface PlanState {
  readonly request: MemoryRequest;
  readonly graph: Graph;
  readonly storage: TensorStorage;
  readonly ipuCount: number;
  /** Bytes of a value (or of its copy on another IPU, `id + values`). */
  readonly bytesOf: (id: number) => number;
  /** The IPU of a node. */
  readonly ipuOfNode: (node: number) => number;
  /** The items each IPU holds, by IPU. */
  readonly items: MemoryItem[][];
  /** The streaming memory each IPU uses, by IPU and kind. */
  readonly streamed: Array<Record<StreamedKind, number>>;
}

/** A parameter whose value lives off chip, and the stages that read it. */
interface OffChipWeight {
  readonly id: ValueId;
  readonly bytes: number;
  readonly stages: ReadonlySet<number>;
}

/** The largest optimizer state and accumulator each IPU streams in to update one weight. */
interface LargestStreamed {
  readonly optimizer: number[];
  readonly accumulator: number[];
}

function planState(request: MemoryRequest): PlanState {
  const { graph, placement } = request;
  const valueCount = graph.values.length;
  const ownBytes = request.valueBytes ?? ((id: ValueId) => valueBytes(graph, id));
  const ipuCount = placement.ipusPerReplica;
  return {
    request,
    graph,
    storage: request.storage ?? ON_CHIP_STORAGE,
    ipuCount,
    bytesOf: (id) => ownBytes(id >= valueCount ? id - valueCount : id),
    ipuOfNode: (node) => placement.stages[placement.nodeStages[node]!]!.ipu,
    items: Array.from({ length: ipuCount }, () => []),
    streamed: Array.from({ length: ipuCount }, () => Object.fromEntries(STREAMED.map((k) => [k, 0])) as Record<StreamedKind, number>),
  };
}

/** Each parameter and constant nodes read (through views too), with the IPUs and stages that read it. */
function residentReaders(state: PlanState): Map<ValueId, { ipus: Set<number>; stages: Set<number> }> {
  const { graph } = state;
  const { placement } = state.request;
  const readers = new Map<ValueId, { ipus: Set<number>; stages: Set<number> }>();
  const residentRoots = (id: ValueId): ValueId[] => {
    const source = graph.values[id]!.source;
    if (source.kind === 'param' || source.kind === 'constant') return [id];
    const node = source.kind === 'node' ? graph.nodes[source.node]! : undefined;
    return node && isViewNode(graph, node) ? node.inputs.flatMap(residentRoots) : [];
  };
  for (const node of graph.nodes) {
    for (const id of node.inputs) {
      for (const root of residentRoots(id)) {
        const r = readers.get(root) ?? { ipus: new Set(), stages: new Set() };
        r.ipus.add(state.ipuOfNode(node.id));
        r.stages.add(placement.nodeStages[node.id]!);
        readers.set(root, r);
      }
    }
  }
  return readers;
}

/** The optimizer state and gradient accumulator of trained weight `name` (`elements` of `bytes`) on `ipu`: on chip, or streamed. */
function addTrainedState(state: PlanState, ipu: number, name: string, elements: number, bytes: number, largest: LargestStreamed): void {
  const { request, storage, items, streamed } = state;
  const R = storage.replicationFactor;
  const perElement = bytes / Math.max(1, elements);
  const stateBytes = request.optimizerSlots.reduce((sum, slot) => sum + elements * bytesPerState(slot.precision, perElement), 0);
  if (stateBytes > 0) {
    const shard = stateBytes * shardFraction(storage.optimizer, elements, R);
    if (isOffChip(storage.optimizer, elements)) {
      streamed[ipu]!['optimizer state'] += shard;
      largest.optimizer[ipu] = Math.max(largest.optimizer[ipu]!, shard);
    } else {
      items[ipu]!.push({ kind: 'optimizer state', name, bytes: shard });
    }
  }
  if (request.gradientAccumulation > 1 && request.separateAccumulator !== false) {
    const accumulator = elements * bytesPerState(request.accumulatorPrecision ?? 'parameter', perElement);
    if (isOffChip(storage.accumulator, elements)) {
      streamed[ipu]!['gradient accumulators'] += accumulator;
      largest.accumulator[ipu] = Math.max(largest.accumulator[ipu]!, accumulator);
    } else {
      items[ipu]!.push({ kind: 'gradient accumulators', name, bytes: accumulator });
    }
  }
}

/**
 * Weights and constants on every IPU that reads them, with the optimizer state
 * and accumulators of trained weights. Parameters may live off chip; constants
 * are part of the program and stay on chip. Returns the weights off chip.
 */
function addResidentTensors(state: PlanState, largest: LargestStreamed): OffChipWeight[] {
  const { request, graph, storage, items, streamed } = state;
  const phasedLiveness = request.placement.phased?.liveness ?? 'AlwaysLive';
  const broadcastConstants = backwardFillConstants(graph);
  const weightOffChip = (id: ValueId, elements: number) =>
    graph.values[id]!.source.kind === 'param' && (phasedLiveness === 'OffChipAfterEachPhase' || isOffChip(storage.weight, elements));
  const offChipWeights: OffChipWeight[] = [];
  for (const [id, { ipus, stages }] of residentReaders(state)) {
    if (broadcastConstants.has(id)) continue;
    const value = graph.values[id]!;
    const source = value.source;
    const elements = sizeOf(value.shape);
    const bytes = state.bytesOf(id);
    const name = source.kind === 'param' ? (request.weightNames?.get(source.name) ?? source.name) : `constant %${id} ${value.dtype}[${value.shape.join(',')}]`;
    for (const ipu of ipus) {
      if (weightOffChip(id, elements)) streamed[ipu]!.weights += bytes * shardFraction(storage.weight, elements, storage.replicationFactor);
      else items[ipu]!.push({ kind: 'weights', name, bytes });
      if (source.kind !== 'param' || !request.training || !request.trainedWeights.has(source.name)) continue;
      addTrainedState(state, ipu, name, elements, bytes, largest);
    }
    if (weightOffChip(id, elements)) offChipWeights.push({ id, bytes, stages });
  }
  return offChipWeights;
}

/** On chip, the state and accumulator of the weight being updated, when they are streamed. */
function addStreamedUpdates(state: PlanState, largest: LargestStreamed): void {
  for (let ipu = 0; ipu < state.ipuCount; ipu++) {
    if (largest.optimizer[ipu]! > 0) state.items[ipu]!.push({ kind: 'optimizer state', name: 'state of the weight being updated (streamed)', bytes: largest.optimizer[ipu]! });
    if (largest.accumulator[ipu]! > 0) {
      state.items[ipu]!.push({ kind: 'gradient accumulators', name: 'accumulator being updated (streamed)', bytes: largest.accumulator[ipu]! });
    }
  }
}

/** Off-chip weights are loaded for the steps that read them: on chip is the largest step's set, per IPU. */
function addLargestStreamedStep(state: PlanState, offChipWeights: readonly OffChipWeight[]): void {
  if (offChipWeights.length === 0) return;
  const { placement, schedule } = state.request;
  const onChip = new Array<number>(state.ipuCount).fill(0);
  for (const step of schedule.steps) {
    const running = new Set(step.work.flatMap((w) => placement.units[w.unit]!.stages));
    const perIpu = new Array<number>(state.ipuCount).fill(0);
    for (const w of offChipWeights) {
      for (const ipu of new Set([...w.stages].filter((s) => running.has(s)).map((s) => placement.stages[s]!.ipu))) perIpu[ipu]! += w.bytes;
    }
    perIpu.forEach((b, ipu) => (onChip[ipu] = Math.max(onChip[ipu]!, b)));
  }
  onChip.forEach((bytes, ipu) => bytes > 0 && state.items[ipu]!.push({ kind: 'weights', name: 'weights of the largest step (streamed)', bytes }));
}

/** What IPU `ipu` holds: its items so far, its activations and temporary memory at its peak, and its code and exchange buffers. */
function ipuMemoryUse(state: PlanState, ipu: number, peak: MemoryPeak): IpuMemoryUse {
  const { graph, storage } = state;
  const { spec } = state.request;
  const list = state.items[ipu]!;
  if (peak.stashed > 0) list.push({ kind: 'activations', name: `stashed activations of ${peak.microBatchesInFlight} micro-batch(es) in flight`, bytes: peak.stashed });
  if (peak.working > 0) list.push({ kind: 'activations', name: `working values at the peak (${peak.during})`, bytes: peak.working });
  if (peak.temporary > 0) list.push({ kind: 'temporary', name: `temporary memory at the peak (${peak.during})`, bytes: peak.temporary });
  const kernels = new Set<string>();
  for (const node of graph.nodes) if (state.ipuOfNode(node.id) === ipu) addCodeKernels(graph, node, kernels);
  const code = kernels.size * CODE_BYTES_PER_KERNEL_TILE * (spec.tiles - storage.ioTiles);
  list.push({ kind: 'code and exchange', name: 'vertex code and exchange buffers', bytes: code + Math.round(EXCHANGE_BUFFER_FRACTION * (peak.stashed + peak.working)) });
  const byKind = Object.fromEntries(KINDS.map((k) => [k, list.filter((i) => i.kind === k).reduce((s, i) => s + i.bytes, 0)])) as Record<MemoryKind, number>;
  const used = Object.values(byKind).reduce((a, b) => a + b, 0);
  const streamingBytes = Object.values(state.streamed[ipu]!).reduce((a, b) => a + b, 0);
  return {
    ipu,
    capacity: (spec.tiles - storage.ioTiles) * spec.memoryPerTile,
    used,
    byKind,
    items: list.filter((i) => i.bytes > 0).sort((a, b) => b.bytes - a.bytes),
    peak,
    streaming: { bytes: streamingBytes, byKind: state.streamed[ipu]! },
    ...(storage.ioTiles > 0 ? { ioTiles: { capacity: storage.ioTiles * spec.memoryPerTile, hostBuffers: state.request.ioTileBuffers?.[ipu] ?? 0 } } : {}),
  };
}

/** Computes what each IPU of a replica holds. */
export function memoryPlan(request: MemoryRequest): MemoryPlan {
  const state = planState(request);
  const largest: LargestStreamed = { optimizer: new Array<number>(state.ipuCount).fill(0), accumulator: new Array<number>(state.ipuCount).fill(0) };
  const offChipWeights = addResidentTensors(state, largest);
  addStreamedUpdates(state, largest);
  addLargestStreamedStep(state, offChipWeights);
  const { peaks, offChipStash } = activationPeaks(request, state.storage, state.bytesOf);
  offChipStash.forEach((bytes, ipu) => (state.streamed[ipu]!.activations += bytes));
  const ipus = state.items.map((_, ipu) => ipuMemoryUse(state, ipu, peaks[ipu]!));
  const streamingCapacity = request.spec.streamingMemoryCapacity;
  const ioFits = (m: IpuMemoryUse) => !m.ioTiles || m.ioTiles.hostBuffers <= m.ioTiles.capacity;
  return { ipus, streamingCapacity, fits: ipus.every((m) => m.used <= m.capacity && m.streaming.bytes <= streamingCapacity && ioFits(m)) };
}

/**
 * Constants that take no memory: those only the backward pass reads that hold
 * one value repeated (the ones, zeros and fills tfjs's gradient functions
 * make, which Poplar keeps as a broadcast of one element). A graph traced
 * with shapes only has no values to check; its backward-only constants are
 * taken to be such fills.
 */
function backwardFillConstants(graph: Graph): Set<ValueId> {
  const forwardRead = new Set<ValueId>();
  for (const node of graph.nodes) if (node.annotations.pass === 'forward') for (const id of node.inputs) forwardRead.add(id);
  const fills = new Set<ValueId>();
  for (const v of graph.values) {
    if (v.source.kind !== 'constant' || forwardRead.has(v.id)) continue;
    const data = v.source.data;
    if (data === null || Array.prototype.every.call(data, (x: unknown, _i: number, all: ArrayLike<unknown>) => x === all[0])) fills.add(v.id);
  }
  return fills;
}
