/**
 * What each simulated IPU holds, and whether it fits: the weights of its
 * stages, the optimizer state and gradient accumulators of its trainable
 * weights, the activations live at the schedule's peak (found by walking the
 * schedule: pipelining keeps the activations of micro-batches in flight,
 * phased liveness sends the stash and weights to streaming memory,
 * recomputation keeps only the stored activations between the passes and
 * remakes the others in the backward pass just before they are read), the
 * temporary memory of its largest kernel (capped by the available-memory
 * proportion), and an estimate of code and exchange buffers.
 */
import { paramValues, sizeOf, type Graph, type ValueId } from '../ir/graph.js';
import { VIEW_KERNELS, valueBytes } from '../ir/node_cost.js';
import { weightDerivedValues } from '../ir/weight_derived_values.js';
import type { Placement } from '../strategy/placement.js';
import type { RecomputationPlan } from '../strategy/recomputation.js';
import type { Schedule } from '../strategy/schedule.js';
import { ipuMemory, type IpuTargetSpec } from './target_spec.js';

/** Estimated vertex code and control per kernel, per tile it is spread over, in bytes (≈ 29 KiB per kernel on a GC200). */
export const CODE_BYTES_PER_KERNEL_TILE = 20;
/** Exchange buffers, as a fraction of the peak activations of an IPU. */
export const EXCHANGE_BUFFER_FRACTION = 0.05;
/** Temporary memory a matmul or convolution may take by default, as a fraction of IPU memory (Poplar's default). */
export const DEFAULT_AVAILABLE_MEMORY_PROPORTION = 0.6;

/** An optimizer state tensor kept per weight, in float32, float16 or the weight's own precision. */
export interface OptimizerSlot {
  readonly precision: 'float32' | 'float16' | 'parameter';
}

/** What kind of thing occupies memory. */
export type MemoryKind = 'weights' | 'optimizer state' | 'gradient accumulators' | 'activations' | 'temporary' | 'code and exchange';

/** One thing held by an IPU. */
export interface MemoryItem {
  readonly kind: MemoryKind;
  readonly name: string;
  readonly bytes: number;
}

/** The memory of one IPU. */
export interface IpuMemoryUse {
  readonly ipu: number;
  readonly capacity: number;
  readonly used: number;
  /** Bytes by kind. */
  readonly byKind: Readonly<Record<MemoryKind, number>>;
  /** The items, largest first. */
  readonly items: readonly MemoryItem[];
}

/** The memory of every IPU of one replica. */
export interface MemoryPlan {
  readonly ipus: readonly IpuMemoryUse[];
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
  /** Names of the weights the optimizer trains. */
  readonly trainedWeights: ReadonlySet<string>;
  /** Temporary memory proportion per IPU (default {@link DEFAULT_AVAILABLE_MEMORY_PROPORTION}). */
  readonly availableMemoryProportion?: Readonly<Record<number, number>>;
  /** Bytes per value, when some values are stored in fewer bytes than their dtype (fp16). */
  readonly valueBytes?: (id: ValueId) => number;
  /** What the backward pass recomputes (default: nothing). */
  readonly recomputation?: RecomputationPlan;
}

/** A node run by a unit: its own node, or a forward node re-run by a backward unit for recomputation. */
interface Execution {
  readonly node: number;
  readonly forward: boolean;
  /** Value ids; a recomputed copy of value `v` is `v + graph.values.length`. */
  readonly inputs: readonly number[];
  readonly outputs: readonly number[];
}

const KINDS: MemoryKind[] = ['weights', 'optimizer state', 'gradient accumulators', 'activations', 'temporary', 'code and exchange'];

/** Temporary memory a kernel asks for: its output again for products and convolutions (partial sums), else nothing. */
function temporaryBytes(kernel: string, outputBytes: number): number {
  return /MatMul|Conv|Pool/.test(kernel) ? outputBytes : 0;
}

/** Computes what each IPU of a replica holds. */
export function memoryPlan(request: MemoryRequest): MemoryPlan {
  const { graph, placement, schedule, spec } = request;
  const valueCount = graph.values.length;
  const base = (id: number) => (id >= valueCount ? id - valueCount : id);
  const ownBytes = request.valueBytes ?? ((id: ValueId) => valueBytes(graph, id));
  const bytesOf = (id: number) => ownBytes(base(id));
  const ipuCount = placement.ipusPerReplica;
  const capacity = ipuMemory(spec);
  const items: MemoryItem[][] = Array.from({ length: ipuCount }, () => []);
  const ipuOfNode = (node: number) => placement.stages[placement.nodeStages[node]!]!.ipu;
  const phasedLiveness = placement.phased?.liveness ?? 'AlwaysLive';
  const weightsStream = phasedLiveness === 'OffChipAfterEachPhase';

  // Weights, optimizer state and accumulators: on every IPU that reads the weight.
  const params = paramValues(graph);
  const weightIpus = new Map<string, Set<number>>();
  const weightStages = new Map<string, Set<number>>();
  for (const node of graph.nodes) {
    for (const id of node.inputs) {
      const source = graph.values[id]!.source;
      if (source.kind !== 'param') continue;
      if (!weightIpus.has(source.name)) weightIpus.set(source.name, new Set());
      if (!weightStages.has(source.name)) weightStages.set(source.name, new Set());
      weightIpus.get(source.name)!.add(ipuOfNode(node.id));
      weightStages.get(source.name)!.add(placement.nodeStages[node.id]!);
    }
  }
  const weightPeakPerIpu = new Array<number>(ipuCount).fill(0);
  for (const [name, ipus] of weightIpus) {
    const bytes = bytesOf(params.get(name)!.id);
    for (const ipu of ipus) {
      if (!weightsStream) items[ipu]!.push({ kind: 'weights', name, bytes });
      if (request.training && request.trainedWeights.has(name)) {
        const elements = sizeOf(params.get(name)!.shape);
        const stateBytes = request.optimizerSlots.reduce(
          (sum, slot) => sum + (slot.precision === 'parameter' ? bytes : elements * (slot.precision === 'float16' ? 2 : 4)),
          0,
        );
        if (stateBytes > 0) items[ipu]!.push({ kind: 'optimizer state', name, bytes: stateBytes });
        if (request.gradientAccumulation > 1) items[ipu]!.push({ kind: 'gradient accumulators', name, bytes });
      }
    }
  }
  if (weightsStream) {
    // Only the weights of the phase running are on chip: the largest phase's weights, per IPU.
    for (const unit of placement.units) {
      const perIpu = new Array<number>(ipuCount).fill(0);
      for (const [name, stages] of weightStages) {
        const ipusOfUnit = unit.stages.filter((s) => stages.has(s)).map((s) => placement.stages[s]!.ipu);
        for (const ipu of new Set(ipusOfUnit)) perIpu[ipu]! += bytesOf(params.get(name)!.id);
      }
      perIpu.forEach((b, ipu) => (weightPeakPerIpu[ipu] = Math.max(weightPeakPerIpu[ipu]!, b)));
    }
    weightPeakPerIpu.forEach((bytes, ipu) => bytes > 0 && items[ipu]!.push({ kind: 'weights', name: 'weights of the largest phase (streamed)', bytes }));
  }

  // Values that depend only on weights and constants (a transposed weight) are made once per step,
  // not per micro-batch; views (Reshape, ...) alias their input and take no memory.
  const perStep = weightDerivedValues(graph);
  const isView = new Array<boolean>(graph.values.length).fill(false);
  for (const node of graph.nodes) if (VIEW_KERNELS.has(node.kernel)) for (const id of node.outputs) isView[id] = true;

  // What each unit runs: under recomputation a backward unit first re-runs forward nodes into
  // recomputed copies, and its nodes read those copies.
  const recomputed = request.recomputation?.recomputed ?? new Set<ValueId>();
  const copyOf = (id: number) => (recomputed.has(id) ? id + valueCount : id);
  // A forward node is re-run just before the first node that needs what it remakes, so a
  // recomputed copy lives from there to its last reader (segment by segment between stored values).
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
  const madeByNode = (id: number) => graph.values[base(id)]!.source.kind === 'node';

  // Activations: walk the schedule, keeping each value on an IPU from its production (or copy)
  // until its last reader there has run for that micro-batch.
  // Readers of each value on each IPU; copying a value to another IPU counts as a reader on its producer's.
  const readers = new Map<string, { all: number; forward: number }>();
  const key = (value: number, ipu: number) => `${value}@${ipu}`;
  const producerIpu = (value: number) => {
    const source = graph.values[base(value)]!.source;
    return source.kind === 'node' ? ipuOfNode(source.node) : -1;
  };
  const countReader = (value: number, ipu: number, forward: boolean) => {
    const r = readers.get(key(value, ipu)) ?? { all: 0, forward: 0 };
    r.all++;
    if (forward) r.forward++;
    readers.set(key(value, ipu), r);
  };
  const copies = new Set<string>();
  for (const execution of unitExecutions.flat()) {
    const ipu = ipuOfNode(execution.node);
    const forward = execution.forward;
    for (const id of new Set(execution.inputs)) {
      if (!madeByNode(id)) continue;
      countReader(id, ipu, forward);
      const from = producerIpu(id);
      if (from !== ipu && !copies.has(key(id, ipu))) {
        copies.add(key(id, ipu));
        countReader(id, from, forward);
      }
    }
  }
  const stashOffChip = phasedLiveness !== 'AlwaysLive';
  const live = new Array<number>(ipuCount).fill(0);
  const peak = new Array<number>(ipuCount).fill(0);
  const temporary = new Array<number>(ipuCount).fill(0);
  const proportion = (ipu: number) => request.availableMemoryProportion?.[ipu] ?? DEFAULT_AVAILABLE_MEMORY_PROPORTION;
  interface Held {
    readonly bytes: number;
    readonly ipu: number;
    readonly microBatch: number;
    readers: number;
    forwardReaders: number;
    onChip: boolean;
  }
  const held = new Map<string, Held>();
  const setOnChip = (h: Held, onChip: boolean) => {
    if (h.onChip === onChip) return;
    h.onChip = onChip;
    live[h.ipu]! += onChip ? h.bytes : -h.bytes;
    peak[h.ipu] = Math.max(peak[h.ipu]!, live[h.ipu]!);
  };
  const hold = (mb: number, value: number, ipu: number, forward: boolean) => {
    const once = perStep[base(value)]!;
    const k = once ? `step:${key(value, ipu)}` : `${mb}:${key(value, ipu)}`;
    if (held.has(k)) return;
    const r = readers.get(key(value, ipu)) ?? { all: 0, forward: 0 };
    // A value made once per step stays until the step ends (its readers span the micro-batches).
    const readersLeft = once ? Number.POSITIVE_INFINITY : r.all;
    const h: Held = { bytes: isView[base(value)] ? 0 : bytesOf(value), ipu, microBatch: once ? -1 : mb, readers: readersLeft, forwardReaders: r.forward, onChip: false };
    held.set(k, h);
    setOnChip(h, true);
    const from = producerIpu(value);
    if (from >= 0 && from !== ipu) read(mb, value, from, forward);
  };
  function read(mb: number, value: number, ipu: number, forward: boolean): void {
    const k = perStep[base(value)] ? `step:${key(value, ipu)}` : `${mb}:${key(value, ipu)}`;
    const h = held.get(k);
    if (!h) return;
    h.readers--;
    if (forward) h.forwardReaders--;
    if (h.readers <= 0) {
      setOnChip(h, false);
      held.delete(k);
    }
  }
  for (const step of schedule.steps) {
    for (const work of step.work) {
      const unit = placement.units[work.unit]!;
      // With off-chip liveness the stash of this micro-batch comes back for the backward pass.
      if (stashOffChip && unit.pass === 'backward') for (const h of held.values()) if (h.microBatch === work.microBatch) setOnChip(h, true);
      for (const execution of unitExecutions[work.unit]!) {
        const ipu = ipuOfNode(execution.node);
        const forward = execution.forward;
        for (const id of execution.inputs) if (madeByNode(id)) hold(work.microBatch, id, ipu, forward);
        const outBytes = execution.outputs.reduce((s, id) => s + bytesOf(id), 0);
        temporary[ipu] = Math.max(temporary[ipu]!, Math.min(temporaryBytes(graph.nodes[execution.node]!.kernel, outBytes), proportion(ipu) * capacity));
        for (const id of execution.outputs) hold(work.microBatch, id, ipu, forward);
        for (const id of new Set(execution.inputs)) read(work.microBatch, id, ipu, forward);
        for (const id of execution.outputs) {
          const k = perStep[base(id)] ? `step:${key(id, ipu)}` : `${work.microBatch}:${key(id, ipu)}`;
          const h = held.get(k);
          if (h && h.readers <= 0) {
            setOnChip(h, false);
            held.delete(k);
          }
        }
      }
      // What only the backward pass still reads leaves the chip after the forward pass.
      if (stashOffChip && unit.pass === 'forward') {
        for (const h of held.values()) if (h.microBatch === work.microBatch && h.forwardReaders <= 0) setOnChip(h, false);
      }
    }
  }

  const ipus: IpuMemoryUse[] = items.map((list, ipu) => {
    list.push({ kind: 'activations', name: 'live activations at the peak', bytes: peak[ipu]! });
    list.push({ kind: 'temporary', name: 'temporary memory of the largest kernel', bytes: temporary[ipu]! });
    const kernels = graph.nodes.filter((n) => ipuOfNode(n.id) === ipu).length;
    const code = kernels * CODE_BYTES_PER_KERNEL_TILE * spec.tiles;
    list.push({ kind: 'code and exchange', name: 'vertex code and exchange buffers', bytes: code + Math.round(EXCHANGE_BUFFER_FRACTION * peak[ipu]!) });
    const byKind = Object.fromEntries(KINDS.map((k) => [k, list.filter((i) => i.kind === k).reduce((s, i) => s + i.bytes, 0)])) as Record<MemoryKind, number>;
    const used = Object.values(byKind).reduce((a, b) => a + b, 0);
    return { ipu, capacity, used, byKind, items: list.filter((i) => i.bytes > 0).sort((a, b) => b.bytes - a.bytes) };
  });
  return { ipus, fits: ipus.every((m) => m.used <= m.capacity) };
}
