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
 *   optimizer's accumulation precision;
 * - code and exchange buffers: an estimate per kernel and tile.
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
import { weightDerivedValues } from '../ir/weight_derived_values.js';
import type { Placement } from '../strategy/placement.js';
import type { RecomputationPlan } from '../strategy/recomputation.js';
import type { Schedule } from '../strategy/schedule.js';
import type { IpuTargetSpec } from './target_spec.js';
import { isOffChip, ON_CHIP_STORAGE, shardFraction, type TensorStorage } from './tensor_storage.js';

/** Estimated vertex code and control per kernel, per tile it is spread over, in bytes (≈ 29 KiB per kernel on a GC200). */
export const CODE_BYTES_PER_KERNEL_TILE = 20;
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

/** One thing held by an IPU. */
export interface MemoryItem {
  readonly kind: MemoryKind;
  readonly name: string;
  readonly bytes: number;
}

/** The not-always-live memory of an IPU at its peak. */
export interface MemoryPeak {
  /** Forward values kept for the backward passes of the micro-batches in flight. */
  readonly stashed: number;
  /** How many micro-batches those stashed values belong to. */
  readonly microBatchesInFlight: number;
  /** The other values live at that moment: the running unit's inputs and outputs, gradients, values copied in. */
  readonly working: number;
  /** Temporary memory of the kernel running at that moment. */
  readonly temporary: number;
  /** The kernel running at that moment and its unit and micro-batch, e.g. `BatchMatMul in B0:3`. */
  readonly during: string;
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
export interface MemoryRequest {
  readonly graph: Graph;
  readonly placement: Placement;
  readonly schedule: Schedule;
  readonly spec: IpuTargetSpec;
  readonly training: boolean;
  /** Gradient accumulation steps (accumulators are needed above 1). */
  readonly gradientAccumulation: number;
  /** The state tensors the optimizer keeps per trained weight (none for plain SGD, two moments for Adam). */
  readonly optimizerSlots: readonly OptimizerSlot[];
  /** The precision of gradient accumulators (default: the weight's own). */
  readonly accumulatorPrecision?: StatePrecision;
  /** Names of the weights the optimizer trains. */
  readonly trainedWeights: ReadonlySet<string>;
  /** Where each kind of tensor lives (default: everything on chip). */
  readonly storage?: TensorStorage;
  /** Temporary memory of a kernel on its IPU, in bytes (default: none). */
  readonly kernelTemporary?: (node: Node) => number;
  /** Bytes per value, when some values are stored in fewer bytes than their dtype (fp16). */
  readonly valueBytes?: (id: ValueId) => number;
  /** What the backward pass recomputes (default: nothing). */
  readonly recomputation?: RecomputationPlan;
}

const KINDS: MemoryKind[] = ['weights', 'optimizer state', 'gradient accumulators', 'activations', 'temporary', 'code and exchange'];
const STREAMED: StreamedKind[] = ['weights', 'optimizer state', 'gradient accumulators', 'activations'];

/** A node run by a unit: its own node, or a forward node re-run by a backward unit for recomputation. */
interface Execution {
  readonly node: number;
  readonly forward: boolean;
  /** Value ids; a recomputed copy of value `v` is `v + graph.values.length`. */
  readonly inputs: readonly number[];
  readonly outputs: readonly number[];
}

/** Storage that activations occupy on one IPU: a value made there, or a copy of a value made on another IPU. */
interface Storage {
  readonly key: string;
  /** The value whose bytes it holds. */
  readonly value: number;
  readonly ipu: number;
  readonly bytes: number;
  readonly elements: number;
  /** Made once per step from weights and constants only (held for the whole step). */
  readonly perStep: boolean;
  /** For a copy: the storage it is copied from, on the producing IPU. */
  readonly copyOf?: readonly Storage[];
}

function bytesPerState(precision: StatePrecision, weightBytesPerElement: number): number {
  return precision === 'parameter' ? weightBytesPerElement : precision === 'float16' ? 2 : 4;
}

/** Computes what each IPU of a replica holds. */
export function memoryPlan(request: MemoryRequest): MemoryPlan {
  const { graph, placement, schedule, spec } = request;
  const storage = request.storage ?? ON_CHIP_STORAGE;
  const R = storage.replicationFactor;
  const valueCount = graph.values.length;
  const base = (id: number) => (id >= valueCount ? id - valueCount : id);
  const ownBytes = request.valueBytes ?? ((id: ValueId) => valueBytes(graph, id));
  const bytesOf = (id: number) => ownBytes(base(id));
  const ipuCount = placement.ipusPerReplica;
  const capacity = (spec.tiles - storage.ioTiles) * spec.memoryPerTile;
  const items: MemoryItem[][] = Array.from({ length: ipuCount }, () => []);
  const streamed: Array<Record<StreamedKind, number>> = Array.from({ length: ipuCount }, () => Object.fromEntries(STREAMED.map((k) => [k, 0])) as Record<StreamedKind, number>);
  const ipuOfNode = (node: number) => placement.stages[placement.nodeStages[node]!]!.ipu;
  const phasedLiveness = placement.phased?.liveness ?? 'AlwaysLive';

  // Weights and constants: on every IPU that reads them (through views too), with the stages that read them.
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
        r.ipus.add(ipuOfNode(node.id));
        r.stages.add(placement.nodeStages[node.id]!);
        readers.set(root, r);
      }
    }
  }
  // Parameters may live off chip; constants are part of the program and stay on chip.
  const broadcastConstants = backwardFillConstants(graph);
  const weightOffChip = (id: ValueId, elements: number) =>
    graph.values[id]!.source.kind === 'param' && (phasedLiveness === 'OffChipAfterEachPhase' || isOffChip(storage.weight, elements));
  const offChipWeights: Array<{ id: ValueId; bytes: number; stages: Set<number> }> = [];
  const largestStreamed = { optimizer: new Array<number>(ipuCount).fill(0), accumulator: new Array<number>(ipuCount).fill(0) };
  for (const [id, { ipus, stages }] of readers) {
    if (broadcastConstants.has(id)) continue;
    const value = graph.values[id]!;
    const source = value.source;
    const elements = sizeOf(value.shape);
    const bytes = bytesOf(id);
    const name = source.kind === 'param' ? source.name : `constant %${id} ${value.dtype}[${value.shape.join(',')}]`;
    for (const ipu of ipus) {
      if (weightOffChip(id, elements)) streamed[ipu]!.weights += bytes * shardFraction(storage.weight, elements, R);
      else items[ipu]!.push({ kind: 'weights', name, bytes });
      if (source.kind !== 'param' || !request.training || !request.trainedWeights.has(source.name)) continue;
      const perElement = bytes / Math.max(1, elements);
      const stateBytes = request.optimizerSlots.reduce((sum, slot) => sum + elements * bytesPerState(slot.precision, perElement), 0);
      if (stateBytes > 0) {
        const shard = stateBytes * shardFraction(storage.optimizer, elements, R);
        if (isOffChip(storage.optimizer, elements)) {
          streamed[ipu]!['optimizer state'] += shard;
          largestStreamed.optimizer[ipu] = Math.max(largestStreamed.optimizer[ipu]!, shard);
        } else {
          items[ipu]!.push({ kind: 'optimizer state', name, bytes: shard });
        }
      }
      if (request.gradientAccumulation > 1) {
        const accumulator = elements * bytesPerState(request.accumulatorPrecision ?? 'parameter', perElement);
        if (isOffChip(storage.accumulator, elements)) {
          streamed[ipu]!['gradient accumulators'] += accumulator;
          largestStreamed.accumulator[ipu] = Math.max(largestStreamed.accumulator[ipu]!, accumulator);
        } else {
          items[ipu]!.push({ kind: 'gradient accumulators', name, bytes: accumulator });
        }
      }
    }
    if (weightOffChip(id, elements)) offChipWeights.push({ id, bytes, stages });
  }
  for (let ipu = 0; ipu < ipuCount; ipu++) {
    if (largestStreamed.optimizer[ipu]! > 0) items[ipu]!.push({ kind: 'optimizer state', name: 'state of the weight being updated (streamed)', bytes: largestStreamed.optimizer[ipu]! });
    if (largestStreamed.accumulator[ipu]! > 0) {
      items[ipu]!.push({ kind: 'gradient accumulators', name: 'accumulator being updated (streamed)', bytes: largestStreamed.accumulator[ipu]! });
    }
  }
  if (offChipWeights.length > 0) {
    // Off-chip weights are loaded for the steps that read them: on chip is the largest step's set, per IPU.
    const onChip = new Array<number>(ipuCount).fill(0);
    for (const step of schedule.steps) {
      const running = new Set(step.work.flatMap((w) => placement.units[w.unit]!.stages));
      const perIpu = new Array<number>(ipuCount).fill(0);
      for (const w of offChipWeights) {
        for (const ipu of new Set([...w.stages].filter((s) => running.has(s)).map((s) => placement.stages[s]!.ipu))) perIpu[ipu]! += w.bytes;
      }
      perIpu.forEach((b, ipu) => (onChip[ipu] = Math.max(onChip[ipu]!, b)));
    }
    onChip.forEach((bytes, ipu) => bytes > 0 && items[ipu]!.push({ kind: 'weights', name: 'weights of the largest step (streamed)', bytes }));
  }

  const { peaks, offChipStash } = activationPeaks(request, storage, bytesOf);
  offChipStash.forEach((bytes, ipu) => (streamed[ipu]!.activations += bytes));

  const ipus: IpuMemoryUse[] = items.map((list, ipu) => {
    const peak = peaks[ipu]!;
    if (peak.stashed > 0) list.push({ kind: 'activations', name: `stashed activations of ${peak.microBatchesInFlight} micro-batch(es) in flight`, bytes: peak.stashed });
    if (peak.working > 0) list.push({ kind: 'activations', name: `working values at the peak (${peak.during})`, bytes: peak.working });
    if (peak.temporary > 0) list.push({ kind: 'temporary', name: `temporary memory at the peak (${peak.during})`, bytes: peak.temporary });
    const kernels = graph.nodes.filter((n) => ipuOfNode(n.id) === ipu && !isViewNode(graph, n)).length;
    const code = kernels * CODE_BYTES_PER_KERNEL_TILE * (spec.tiles - storage.ioTiles);
    list.push({ kind: 'code and exchange', name: 'vertex code and exchange buffers', bytes: code + Math.round(EXCHANGE_BUFFER_FRACTION * (peak.stashed + peak.working)) });
    const byKind = Object.fromEntries(KINDS.map((k) => [k, list.filter((i) => i.kind === k).reduce((s, i) => s + i.bytes, 0)])) as Record<MemoryKind, number>;
    const used = Object.values(byKind).reduce((a, b) => a + b, 0);
    const streamingBytes = Object.values(streamed[ipu]!).reduce((a, b) => a + b, 0);
    return {
      ipu,
      capacity,
      used,
      byKind,
      items: list.filter((i) => i.bytes > 0).sort((a, b) => b.bytes - a.bytes),
      peak,
      streaming: { bytes: streamingBytes, byKind: streamed[ipu]! },
    };
  });
  return {
    ipus,
    streamingCapacity: spec.streamingMemoryCapacity,
    fits: ipus.every((m) => m.used <= m.capacity && m.streaming.bytes <= spec.streamingMemoryCapacity),
  };
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

/**
 * Partial gradients of a trained weight that is read in several places (a
 * tied weight) when gradients are accumulated: each is added to the
 * weight's accumulator as soon as it is made (as PopART's
 * `DecomposeGradSum` pattern lets it), so it does not wait, across pipeline
 * steps, for the other partials to be summed.
 */
function accumulatedPartialGradients(request: MemoryRequest): Set<ValueId> {
  const { graph } = request;
  const partials = new Set<ValueId>();
  if (!request.training || request.gradientAccumulation <= 1) return partials;
  const collect = (id: ValueId) => {
    const source = graph.values[id]!.source;
    if (source.kind !== 'node') return;
    const node = graph.nodes[source.node]!;
    if (node.kernel !== 'Add' && node.kernel !== 'AddN') return;
    for (const input of node.inputs) {
      partials.add(input);
      collect(input);
    }
  };
  for (const [name, id] of Object.entries(graph.roles.gradients ?? {})) if (request.trainedWeights.has(name)) collect(id);
  return partials;
}

/**
 * The not-always-live peak of each IPU: walks the schedule, unit by unit and
 * kernel by kernel, holding each value's storage from its kernel (or copy)
 * to its last reader, and records the moment when live values plus the
 * running kernel's temporary memory are largest. Off-chip stashes (phased
 * `OffChipAfterFwd*` liveness, or activations placed off chip) leave after
 * the forward pass and return for the backward pass; `offChipStash` is the
 * most they hold in streaming memory at once, per IPU.
 */
function activationPeaks(request: MemoryRequest, storage: TensorStorage, bytesOf: (id: number) => number): { peaks: MemoryPeak[]; offChipStash: number[] } {
  const { graph, placement, schedule } = request;
  const valueCount = graph.values.length;
  const base = (id: number) => (id >= valueCount ? id - valueCount : id);
  const ipuCount = placement.ipusPerReplica;
  const ipuOfNode = (node: number) => placement.stages[placement.nodeStages[node]!]!.ipu;
  const temporaryOf = request.kernelTemporary ?? (() => 0);
  const perStep = weightDerivedValues(graph);

  // What each unit runs: under recomputation a backward unit first re-runs forward nodes into
  // recomputed copies (just before the first node that needs what they remake), and its nodes read those copies.
  const recomputed = request.recomputation?.recomputed ?? new Set<ValueId>();
  const copyOf = (id: number) => (recomputed.has(id) ? id + valueCount : id);
  const unitExecutions: Execution[][] = placement.units.map(() => []);
  const rerun = new Set<number>();
  const rerunMaking = (unit: number, id: number): void => {
    const source = graph.values[id]!.source;
    if (!recomputed.has(id) || source.kind !== 'node' || rerun.has(source.node)) return;
    rerun.add(source.node);
    const node = graph.nodes[source.node]!;
    for (const input of node.inputs) rerunMaking(unit, input);
    unitExecutions[unit]!.push({ node: node.id, forward: false, inputs: node.inputs.map(copyOf), outputs: node.outputs.map((v) => v + valueCount) });
  };
  for (const node of graph.nodes) {
    const unit = placement.nodeUnits[node.id]!;
    const forward = node.annotations.pass === 'forward';
    if (!forward) for (const id of node.inputs) rerunMaking(unit, id);
    unitExecutions[unit]!.push({ node: node.id, forward, inputs: forward ? node.inputs : node.inputs.map(copyOf), outputs: node.outputs });
  }

  // The storage each value occupies on an IPU. Views (made on that IPU) occupy their inputs';
  // a value made on another IPU is copied over, and the copy reads the original.
  const isActivation = (id: number) => {
    const kind = graph.values[base(id)]!.source.kind;
    return kind === 'node' || kind === 'input';
  };
  const producerIpu = (id: number) => {
    const source = graph.values[base(id)]!.source;
    return source.kind === 'node' ? ipuOfNode(source.node) : -1;
  };
  const producerNode = (id: number): Node | undefined => {
    const source = graph.values[base(id)]!.source;
    return source.kind === 'node' ? graph.nodes[source.node] : undefined;
  };
  const storages = new Map<string, readonly Storage[]>();
  const storageOn = (id: number, ipu: number): readonly Storage[] => {
    const key = `${id}@${ipu}`;
    const known = storages.get(key);
    if (known) return known;
    let result: Storage[];
    if (!isActivation(id)) {
      result = [];
    } else {
      const from = producerIpu(id);
      const node = producerNode(id);
      const recomputedCopy = id >= valueCount;
      const one = (copy?: readonly Storage[]): Storage[] => [
        { key, value: id, ipu, bytes: bytesOf(id), elements: sizeOf(graph.values[base(id)]!.shape), perStep: perStep[base(id)]!, ...(copy ? { copyOf: copy } : {}) },
      ];
      if (from === ipu || from < 0) {
        // A view looks at what its node read: recomputed copies for a re-run or backward node, else the originals.
        const readsCopies = recomputedCopy || node?.annotations.pass === 'backward';
        result = node && isViewNode(graph, node)
          ? [...new Set(node.inputs.flatMap((input) => storageOn(readsCopies ? copyOf(input) : input, ipu)))]
          : one();
      } else {
        result = one(storageOn(id, from));
      }
    }
    storages.set(key, result);
    return result;
  };

  // Readers of each storage (per micro-batch): the executions that read it on its IPU, and the copies made of it.
  const readerCount = new Map<string, { all: number; forward: number }>();
  const countReader = (s: Storage, forward: boolean) => {
    const r = readerCount.get(s.key) ?? { all: 0, forward: 0 };
    r.all++;
    if (forward) r.forward++;
    readerCount.set(s.key, r);
  };
  // The copies of each value (by id, recomputed copies included) to the other IPUs that read it.
  const copiesOf = new Map<number, Storage[]>();
  const accumulated = accumulatedPartialGradients(request);
  const inputStorage = (execution: Execution): Storage[] => {
    const ipu = ipuOfNode(execution.node);
    return [...new Set(execution.inputs.filter((id) => !accumulated.has(id)).flatMap((id) => storageOn(id, ipu)))];
  };
  const copies = new Set<string>();
  for (const execution of unitExecutions.flat()) {
    for (const s of inputStorage(execution)) {
      countReader(s, execution.forward);
      if (!s.copyOf || copies.has(s.key)) continue;
      copies.add(s.key);
      copiesOf.set(s.value, [...(copiesOf.get(s.value) ?? []), s]);
      for (const source of s.copyOf) countReader(source, execution.forward);
    }
  }

  const stashOffChip = (placement.phased?.liveness ?? 'AlwaysLive') !== 'AlwaysLive';
  const stashRule = storage.activation;
  const live = new Array<number>(ipuCount).fill(0);
  const offChip = new Array<number>(ipuCount).fill(0);
  const offChipPeak = new Array<number>(ipuCount).fill(0);
  const peaks: MemoryPeak[] = Array.from({ length: ipuCount }, () => ({ stashed: 0, microBatchesInFlight: 0, working: 0, temporary: 0, during: '-' }));
  const peakTotal = new Array<number>(ipuCount).fill(0);
  interface Held {
    readonly storage: Storage;
    readonly microBatch: number;
    readonly madeForward: boolean;
    readers: number;
    forwardReaders: number;
    onChip: boolean;
    stashedOffChip: boolean;
  }
  const held = new Map<string, Held>();
  const heldKey = (mb: number, s: Storage) => (s.perStep ? `step:${s.key}` : `${mb}:${s.key}`);
  const setOnChip = (h: Held, onChip: boolean) => {
    if (h.onChip === onChip) return;
    h.onChip = onChip;
    live[h.storage.ipu]! += onChip ? h.storage.bytes : -h.storage.bytes;
  };
  const release = (k: string, h: Held) => {
    setOnChip(h, false);
    if (h.stashedOffChip) moveStash(h, false);
    held.delete(k);
  };
  /** Sends a stashed value to streaming memory (`off`) or brings it back. */
  const moveStash = (h: Held, off: boolean) => {
    if (h.stashedOffChip === off) return;
    h.stashedOffChip = off;
    setOnChip(h, !off);
    const ipu = h.storage.ipu;
    offChip[ipu]! += off ? h.storage.bytes : -h.storage.bytes;
    offChipPeak[ipu] = Math.max(offChipPeak[ipu]!, offChip[ipu]!);
  };
  const read = (mb: number, s: Storage, forward: boolean) => {
    const k = heldKey(mb, s);
    const h = held.get(k);
    if (!h) return;
    h.readers--;
    if (forward) h.forwardReaders--;
    if (h.readers <= 0) release(k, h);
  };
  const hold = (mb: number, s: Storage, forward: boolean) => {
    const k = heldKey(mb, s);
    if (held.has(k)) return;
    const r = readerCount.get(s.key) ?? { all: 0, forward: 0 };
    // A value made once per step stays until the step ends (its readers span the micro-batches).
    const h: Held = { storage: s, microBatch: s.perStep ? -1 : mb, madeForward: forward, readers: s.perStep ? Number.POSITIVE_INFINITY : r.all, forwardReaders: r.forward, onChip: false, stashedOffChip: false };
    held.set(k, h);
    setOnChip(h, true);
    if (s.copyOf) for (const source of s.copyOf) read(mb, source, forward);
  };
  const isStashed = (h: Held) => h.onChip && h.madeForward && h.forwardReaders <= 0 && h.readers > 0 && h.microBatch >= 0;
  const recordMoment = (ipu: number, temporary: number, during: string) => {
    const total = live[ipu]! + temporary;
    if (total <= peakTotal[ipu]!) return;
    peakTotal[ipu] = total;
    let stashed = 0;
    const inFlight = new Set<number>();
    for (const h of held.values()) {
      if (h.storage.ipu !== ipu || !isStashed(h)) continue;
      stashed += h.storage.bytes;
      inFlight.add(h.microBatch);
    }
    peaks[ipu] = { stashed, microBatchesInFlight: inFlight.size, working: live[ipu]! - stashed, temporary, during };
  };
  const offChipStash = (h: Held) => stashOffChip || (request.training && stashRule.offChip && h.storage.elements >= stashRule.minElementsForOffChip);

  for (const step of schedule.steps) {
    // Values read on other IPUs in later steps are copied over at the end of the step that made them.
    const pendingCopies: Array<{ microBatch: number; copy: Storage; forward: boolean }> = [];
    for (const work of step.work) {
      const unit = placement.units[work.unit]!;
      const label = `${unit.pass === 'forward' ? 'F' : 'B'}${unit.stages.join('+')}:${work.microBatch}`;
      // An off-chip stash of this micro-batch comes back for its backward pass.
      if (unit.pass === 'backward') for (const h of held.values()) if (h.microBatch === work.microBatch) moveStash(h, false);
      for (const execution of unitExecutions[work.unit]!) {
        const ipu = ipuOfNode(execution.node);
        const node = graph.nodes[execution.node]!;
        const inputs = inputStorage(execution);
        for (const s of inputs) hold(work.microBatch, s, execution.forward);
        const outputs = [...new Set(execution.outputs.flatMap((id) => storageOn(id, ipu)))].filter((s) => !held.has(heldKey(work.microBatch, s)));
        for (const s of outputs) hold(work.microBatch, s, execution.forward);
        recordMoment(ipu, temporaryOf(node), `${node.kernel} in ${label}`);
        for (const s of inputs) read(work.microBatch, s, execution.forward);
        for (const s of outputs) {
          const k = heldKey(work.microBatch, s);
          const h = held.get(k);
          if (h && h.readers <= 0) release(k, h);
        }
        for (const id of execution.outputs) for (const copy of copiesOf.get(id) ?? []) pendingCopies.push({ microBatch: work.microBatch, copy, forward: execution.forward });
      }
      // What only the backward pass still reads leaves the chip after the forward pass, when the stash lives off chip.
      if (unit.pass === 'forward') {
        for (const h of held.values()) if (h.microBatch === work.microBatch && h.forwardReaders <= 0 && offChipStash(h)) moveStash(h, true);
      }
    }
    for (const { microBatch, copy, forward } of pendingCopies) hold(microBatch, copy, forward);
  }
  return { peaks, offChipStash: offChipPeak };
}
