/**
 * The not-always-live memory of each IPU: the activations and temporary
 * memory at the peak of the schedule, found by walking it kernel by kernel
 * (see {@link activationPeaks}).
 */
import { sizeOf, type Node, type ValueId } from '../ir/graph.js';
import { dropoutMaskValues } from '../ir/dropout_masks.js';
import { isViewNode } from '../ir/value_views.js';
import { weightDerivedValues } from '../ir/weight_derived_values.js';
import type { Graph } from '../ir/graph.js';
import type { Placement } from '../strategy/placement.js';
import type { RecomputationPlan } from '../strategy/recomputation.js';
import type { Schedule, ScheduledWork } from '../strategy/schedule.js';
import type { TensorStorage } from './tensor_storage.js';
import { scopedName } from '../trace/name_scope.js';

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

/** What the walk needs: the placed, scheduled graph and what a training step keeps. */
export interface PeakRequest {
  readonly graph: Graph;
  readonly placement: Placement;
  readonly schedule: Schedule;
  readonly training: boolean;
  /** Gradient accumulation steps (accumulators exist above 1). */
  readonly gradientAccumulation: number;
  /** Names of the weights the optimizer trains. */
  readonly trainedWeights: ReadonlySet<string>;
  /** Temporary memory of a kernel on its IPU, in bytes (default: none). */
  readonly kernelTemporary?: (node: Node) => number;
  /** What the backward pass recomputes (default: nothing). */
  readonly recomputation?: RecomputationPlan;
  /** Which nodes make views of their inputs, taking no memory (default: the IPU's, {@link isViewNode}). */
  readonly isView?: (graph: Graph, node: Node) => boolean;
}

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
  /** `value × IPUs + ipu`: one key per value and IPU. */
  readonly key: number;
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

/** An execution on its IPU, with the storage it reads (accumulated partial gradients aside) and the storage it makes. */
interface PlacedExecution {
  readonly execution: Execution;
  readonly node: Node;
  readonly ipu: number;
  readonly inputs: readonly Storage[];
  readonly outputs: readonly Storage[];
}

/** The storage of each of `ids` (by `storageOf`, each without repeats), without repeats, in first-seen order. */
function distinctStorage(ids: readonly number[], storageOf: (id: number) => readonly Storage[]): readonly Storage[] {
  if (ids.length === 1) return storageOf(ids[0]!);
  const result: Storage[] = [];
  const seen = new Set<Storage>();
  for (const id of ids) {
    for (const s of storageOf(id)) {
      if (seen.has(s)) continue;
      seen.add(s);
      result.push(s);
    }
  }
  return result;
}

/**
 * Partial gradients of a trained weight that is read in several places (a
 * tied weight) when gradients are accumulated: each is added to the
 * weight's accumulator as soon as it is made (as PopART's
 * `DecomposeGradSum` pattern lets it), so it does not wait, across pipeline
 * steps, for the other partials to be summed.
 */
function accumulatedPartialGradients(request: PeakRequest): Set<ValueId> {
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
 * What each unit runs: under recomputation a backward unit first re-runs
 * forward nodes into recomputed copies (just before the first node that needs
 * what they remake), and its nodes read those copies.
 */
function unitExecutions(request: PeakRequest): Execution[][] {
  const { graph, placement } = request;
  const valueCount = graph.values.length;
  const recomputed = request.recomputation?.recomputed ?? new Set<ValueId>();
  const copyOf = (id: number) => (recomputed.has(id) ? id + valueCount : id);
  const executions: Execution[][] = placement.units.map(() => []);
  const rerun = new Set<number>();
  const rerunMaking = (unit: number, id: number): void => {
    const source = graph.values[id]!.source;
    if (!recomputed.has(id) || source.kind !== 'node' || rerun.has(source.node)) return;
    rerun.add(source.node);
    const node = graph.nodes[source.node]!;
    for (const input of node.inputs) rerunMaking(unit, input);
    executions[unit]!.push({ node: node.id, forward: false, inputs: node.inputs.map(copyOf), outputs: node.outputs.map((v) => v + valueCount) });
  };
  for (const node of graph.nodes) {
    const unit = placement.nodeUnits[node.id]!;
    const forward = node.annotations.pass === 'forward';
    if (!forward) for (const id of node.inputs) rerunMaking(unit, id);
    executions[unit]!.push({ node: node.id, forward, inputs: forward ? node.inputs : node.inputs.map(copyOf), outputs: node.outputs });
  }
  return executions;
}

/**
 * The storage each value occupies on an IPU. Views (made on that IPU) occupy
 * their inputs'; a value made on another IPU is copied over, and the copy
 * reads the original.
 */
class StorageMap {
  private readonly storages = new Map<number, readonly Storage[]>();
  private readonly valueCount: number;
  private readonly ipuCount: number;
  private readonly isView: (graph: Graph, node: Node) => boolean;
  private readonly perStep: readonly boolean[];
  private readonly recomputed: ReadonlySet<ValueId>;
  private readonly masks: readonly boolean[];

  constructor(
    private readonly request: PeakRequest,
    private readonly bytesOf: (id: number) => number,
  ) {
    this.valueCount = request.graph.values.length;
    this.ipuCount = request.placement.ipusPerReplica;
    this.isView = request.isView ?? isViewNode;
    this.perStep = weightDerivedValues(request.graph);
    this.recomputed = request.recomputation?.recomputed ?? new Set<ValueId>();
    this.masks = dropoutMaskValues(request.graph);
  }

  /** The IPU node `node` runs on. */
  ipuOfNode(node: number): number {
    const { placement } = this.request;
    return placement.stages[placement.nodeStages[node]!]!.ipu;
  }

  /** The storage value `id` (a recomputed copy: `id + values`) occupies on `ipu`. */
  on(id: number, ipu: number): readonly Storage[] {
    const key = id * this.ipuCount + ipu;
    const known = this.storages.get(key);
    if (known) return known;
    const result = this.isActivation(id) ? this.activationStorage(id, ipu, key) : [];
    this.storages.set(key, result);
    return result;
  }

  private base(id: number): number {
    return id >= this.valueCount ? id - this.valueCount : id;
  }

  /** A value made by a node or fed in, except a dropout mask, which the op that applies it draws in place (lib/ir/dropout_masks.ts). */
  private isActivation(id: number): boolean {
    const kind = this.request.graph.values[this.base(id)]!.source.kind;
    return (kind === 'node' || kind === 'input') && !this.masks[this.base(id)];
  }

  private activationStorage(id: number, ipu: number, key: number): readonly Storage[] {
    const { graph } = this.request;
    const source = graph.values[this.base(id)]!.source;
    const from = source.kind === 'node' ? this.ipuOfNode(source.node) : -1;
    const node = source.kind === 'node' ? graph.nodes[source.node] : undefined;
    const one = (copy?: readonly Storage[]): Storage[] => [
      {
        key,
        value: id,
        ipu,
        bytes: this.bytesOf(id),
        elements: sizeOf(graph.values[this.base(id)]!.shape),
        perStep: this.perStep[this.base(id)]!,
        ...(copy ? { copyOf: copy } : {}),
      },
    ];
    if (from !== ipu && from >= 0) return one(this.on(id, from));
    if (!node || !this.isView(graph, node)) return one();
    // A view looks at what its node read: recomputed copies for a re-run or backward node, else the originals.
    const readsCopies = id >= this.valueCount || node.annotations.pass === 'backward';
    const copyOf = (input: number) => (readsCopies && this.recomputed.has(input) ? input + this.valueCount : input);
    return distinctStorage(node.inputs, (input) => this.on(copyOf(input), ipu));
  }
}

/** Readers of a storage per micro-batch: all of them, and those of the forward pass. */
interface ReaderCount {
  all: number;
  forward: number;
}

/** The units' executions placed on their IPUs, the readers of each storage, and the copies of each value to other IPUs. */
interface PlacedRuns {
  readonly unitRuns: readonly (readonly PlacedExecution[])[];
  readonly readerCount: ReadonlyMap<number, ReaderCount>;
  /** The copies of each value (by id, recomputed copies included) to the other IPUs that read it. */
  readonly copiesOf: ReadonlyMap<number, readonly Storage[]>;
}

/** Readers of each storage (per micro-batch): the executions that read it on its IPU, and the copies made of it. */
function placeRuns(request: PeakRequest, storages: StorageMap): PlacedRuns {
  const { graph } = request;
  const accumulated = accumulatedPartialGradients(request);
  const placed = (execution: Execution): PlacedExecution => {
    const ipu = storages.ipuOfNode(execution.node);
    const on = (id: number) => storages.on(id, ipu);
    return {
      execution,
      node: graph.nodes[execution.node]!,
      ipu,
      inputs: distinctStorage(accumulated.size > 0 ? execution.inputs.filter((id) => !accumulated.has(id)) : execution.inputs, on),
      outputs: distinctStorage(execution.outputs, on),
    };
  };
  const unitRuns = unitExecutions(request).map((executions) => executions.map(placed));
  const readerCount = new Map<number, ReaderCount>();
  const countReader = (s: Storage, forward: boolean) => {
    const r = readerCount.get(s.key) ?? { all: 0, forward: 0 };
    r.all++;
    if (forward) r.forward++;
    readerCount.set(s.key, r);
  };
  const copiesOf = new Map<number, Storage[]>();
  const copies = new Set<number>();
  for (const { execution, inputs } of unitRuns.flat()) {
    for (const s of inputs) {
      countReader(s, execution.forward);
      if (!s.copyOf || copies.has(s.key)) continue;
      copies.add(s.key);
      copiesOf.set(s.value, [...(copiesOf.get(s.value) ?? []), s]);
      for (const source of s.copyOf) countReader(source, execution.forward);
    }
  }
  return { unitRuns, readerCount, copiesOf };
}

/** Storage held during the walk, for one micro-batch (or, made once per step, for all). */
interface Held {
  readonly storage: Storage;
  readonly microBatch: number;
  readonly madeForward: boolean;
  readers: number;
  forwardReaders: number;
  onChip: boolean;
  stashedOffChip: boolean;
  /** Counted in its IPU's stashed bytes and micro-batches in flight. */
  counted: boolean;
}

/** The peak of an IPU, with the running node and the label of its unit and micro-batch. */
type PeakMoment = Omit<MemoryPeak, 'during'> & { readonly at?: { readonly node: Node; readonly label: string } };

/**
 * The walk of the schedule: the storage held on each IPU, on chip or stashed
 * off chip, and the largest moment of each IPU so far.
 */
class ActivationWalk {
  private readonly live: number[];
  private readonly offChip: number[];
  /** The most each IPU's off-chip stash held at once. */
  readonly offChipPeak: number[];
  readonly peaks: PeakMoment[];
  private readonly peakTotal: number[];
  /** Held storage by micro-batch and storage key (storage made once per step under micro-batch -1). */
  private readonly held = new Map<number, Held>();
  /** The same storage by micro-batch, for what a unit moves on or off chip. */
  private readonly heldByMicroBatch = new Map<number, Set<Held>>();
  /** What is stashed (see isStashed) on each IPU, kept up to date as held storage changes. */
  private readonly stashedBytes: number[];
  private readonly stashedMicroBatches: Array<Map<number, number>>;
  private readonly keySpace: number;
  private readonly stashOffChip: boolean;

  constructor(
    private readonly request: PeakRequest,
    private readonly storage: TensorStorage,
    private readonly readerCount: ReadonlyMap<number, ReaderCount>,
  ) {
    const ipuCount = request.placement.ipusPerReplica;
    this.live = new Array<number>(ipuCount).fill(0);
    this.offChip = new Array<number>(ipuCount).fill(0);
    this.offChipPeak = new Array<number>(ipuCount).fill(0);
    this.peaks = Array.from({ length: ipuCount }, () => ({ stashed: 0, microBatchesInFlight: 0, working: 0, temporary: 0 }));
    this.peakTotal = new Array<number>(ipuCount).fill(0);
    this.stashedBytes = new Array<number>(ipuCount).fill(0);
    this.stashedMicroBatches = Array.from({ length: ipuCount }, () => new Map<number, number>());
    this.keySpace = 2 * request.graph.values.length * ipuCount;
    this.stashOffChip = (request.placement.phased?.liveness ?? 'AlwaysLive') !== 'AlwaysLive';
  }

  /** What micro-batch `mb` holds. */
  heldOf(mb: number): ReadonlySet<Held> {
    return this.heldByMicroBatch.get(mb) ?? new Set();
  }

  /** True if storage `s` of micro-batch `mb` is held. */
  isHeld(mb: number, s: Storage): boolean {
    return this.held.has(this.heldKey(mb, s));
  }

  /** Holds storage `s` for micro-batch `mb` (made by a forward execution when `forward`); a copy reads what it copies. */
  hold(mb: number, s: Storage, forward: boolean): void {
    const k = this.heldKey(mb, s);
    if (this.held.has(k)) return;
    const r = this.readerCount.get(s.key) ?? { all: 0, forward: 0 };
    // A value made once per step stays until the step ends (its readers span the micro-batches).
    const h: Held = {
      storage: s,
      microBatch: s.perStep ? -1 : mb,
      madeForward: forward,
      readers: s.perStep ? Number.POSITIVE_INFINITY : r.all,
      forwardReaders: r.forward,
      onChip: false,
      stashedOffChip: false,
      counted: false,
    };
    this.held.set(k, h);
    const ofMicroBatch = this.heldByMicroBatch.get(h.microBatch);
    if (ofMicroBatch) ofMicroBatch.add(h);
    else this.heldByMicroBatch.set(h.microBatch, new Set([h]));
    this.setOnChip(h, true);
    if (s.copyOf) for (const source of s.copyOf) this.read(mb, source, forward);
  }

  /** One reader of storage `s` of micro-batch `mb` has read it; the last releases it. */
  read(mb: number, s: Storage, forward: boolean): void {
    const k = this.heldKey(mb, s);
    const h = this.held.get(k);
    if (!h) return;
    h.readers--;
    if (forward) h.forwardReaders--;
    this.count(h, this.isStashed(h));
    if (h.readers <= 0) this.release(k, h);
  }

  /** Releases storage `s` of micro-batch `mb` if nothing reads it (an output no one reads). */
  releaseUnread(mb: number, s: Storage): void {
    const k = this.heldKey(mb, s);
    const h = this.held.get(k);
    if (h && h.readers <= 0) this.release(k, h);
  }

  /** Sends a stashed value to streaming memory (`off`) or brings it back. */
  moveStash(h: Held, off: boolean): void {
    if (h.stashedOffChip === off) return;
    h.stashedOffChip = off;
    this.setOnChip(h, !off);
    const ipu = h.storage.ipu;
    this.offChip[ipu]! += off ? h.storage.bytes : -h.storage.bytes;
    this.offChipPeak[ipu] = Math.max(this.offChipPeak[ipu]!, this.offChip[ipu]!);
  }

  /** True if `h`, which only the backward pass still reads, leaves the chip after the forward pass. */
  stashesOffChip(h: Held): boolean {
    const rule = this.storage.activation;
    return this.stashOffChip || (this.request.training && rule.offChip && h.storage.elements >= rule.minElementsForOffChip);
  }

  /** Records the moment `node` runs on `ipu` with `temporary` bytes, if it is the IPU's largest yet. */
  recordMoment(ipu: number, temporary: number, node: Node, label: string): void {
    const total = this.live[ipu]! + temporary;
    if (total <= this.peakTotal[ipu]!) return;
    this.peakTotal[ipu] = total;
    const stashed = this.stashedBytes[ipu]!;
    this.peaks[ipu] = { stashed, microBatchesInFlight: this.stashedMicroBatches[ipu]!.size, working: this.live[ipu]! - stashed, temporary, at: { node, label } };
  }

  private heldKey(mb: number, s: Storage): number {
    return s.perStep ? s.key : (mb + 1) * this.keySpace + s.key;
  }

  private isStashed(h: Held): boolean {
    return h.onChip && h.madeForward && h.forwardReaders <= 0 && h.readers > 0 && h.microBatch >= 0;
  }

  private count(h: Held, stashed: boolean): void {
    if (h.counted === stashed) return;
    h.counted = stashed;
    const ipu = h.storage.ipu;
    this.stashedBytes[ipu]! += stashed ? h.storage.bytes : -h.storage.bytes;
    const inFlight = this.stashedMicroBatches[ipu]!;
    const n = (inFlight.get(h.microBatch) ?? 0) + (stashed ? 1 : -1);
    if (n === 0) inFlight.delete(h.microBatch);
    else inFlight.set(h.microBatch, n);
  }

  private setOnChip(h: Held, onChip: boolean): void {
    if (h.onChip === onChip) return;
    h.onChip = onChip;
    this.live[h.storage.ipu]! += onChip ? h.storage.bytes : -h.storage.bytes;
    this.count(h, this.isStashed(h));
  }

  private release(k: number, h: Held): void {
    this.setOnChip(h, false);
    if (h.stashedOffChip) this.moveStash(h, false);
    this.held.delete(k);
    this.heldByMicroBatch.get(h.microBatch)?.delete(h);
    this.count(h, false);
  }
}

/** A copy to another IPU, made at the end of the step that made its value. */
interface PendingCopy {
  readonly microBatch: number;
  readonly copy: Storage;
  readonly forward: boolean;
}

/** Runs one unit of work of a step in `walk`: its executions in order, with what its pass moves on or off chip. */
function walkWork(request: PeakRequest, runs: PlacedRuns, walk: ActivationWalk, work: ScheduledWork, pendingCopies: PendingCopy[]): void {
  const temporaryOf = request.kernelTemporary ?? (() => 0);
  const mb = work.microBatch;
  const unit = request.placement.units[work.unit]!;
  const label = `${unit.pass === 'forward' ? 'F' : 'B'}${unit.stages.join('+')}:${mb}`;
  // An off-chip stash of this micro-batch comes back for its backward pass.
  if (unit.pass === 'backward') for (const h of walk.heldOf(mb)) walk.moveStash(h, false);
  for (const { execution, node, ipu, inputs, outputs: made } of runs.unitRuns[work.unit]!) {
    for (const s of inputs) walk.hold(mb, s, execution.forward);
    const outputs = made.filter((s) => !walk.isHeld(mb, s));
    for (const s of outputs) walk.hold(mb, s, execution.forward);
    walk.recordMoment(ipu, temporaryOf(node), node, label);
    for (const s of inputs) walk.read(mb, s, execution.forward);
    for (const s of outputs) walk.releaseUnread(mb, s);
    for (const id of execution.outputs) for (const copy of runs.copiesOf.get(id) ?? []) pendingCopies.push({ microBatch: mb, copy, forward: execution.forward });
  }
  // What only the backward pass still reads leaves the chip after the forward pass, when the stash lives off chip.
  if (unit.pass === 'forward') {
    for (const h of walk.heldOf(mb)) if (h.forwardReaders <= 0 && walk.stashesOffChip(h)) walk.moveStash(h, true);
  }
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
export function activationPeaks(request: PeakRequest, storage: TensorStorage, bytesOf: (id: number) => number): { peaks: MemoryPeak[]; offChipStash: number[] } {
  const runs = placeRuns(request, new StorageMap(request, bytesOf));
  const walk = new ActivationWalk(request, storage, runs.readerCount);
  for (const step of request.schedule.steps) {
    // Values read on other IPUs in later steps are copied over at the end of the step that made them.
    const pendingCopies: PendingCopy[] = [];
    for (const work of step.work) walkWork(request, runs, walk, work, pendingCopies);
    for (const { microBatch, copy, forward } of pendingCopies) walk.hold(microBatch, copy, forward);
  }
  return {
    peaks: walk.peaks.map(({ at, ...peak }) => ({ ...peak, during: at ? `${scopedName(at.node.kernel, at.node.annotations.scope)} in ${at.label}` : '-' })),
    offChipStash: walk.offChipPeak,
  };
}
