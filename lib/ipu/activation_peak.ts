/**
 * The not-always-live memory of each IPU: the activations and temporary
 * memory at the peak of the schedule, found by walking it kernel by kernel
 * (see {@link activationPeaks}).
 */
import { sizeOf, type Node, type ValueId } from '../ir/graph.js';
import { isViewNode } from '../ir/value_views.js';
import { weightDerivedValues } from '../ir/weight_derived_values.js';
import type { Graph } from '../ir/graph.js';
import type { Placement } from '../strategy/placement.js';
import type { RecomputationPlan } from '../strategy/recomputation.js';
import type { Schedule } from '../strategy/schedule.js';
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
 * The not-always-live peak of each IPU: walks the schedule, unit by unit and
 * kernel by kernel, holding each value's storage from its kernel (or copy)
 * to its last reader, and records the moment when live values plus the
 * running kernel's temporary memory are largest. Off-chip stashes (phased
 * `OffChipAfterFwd*` liveness, or activations placed off chip) leave after
 * the forward pass and return for the backward pass; `offChipStash` is the
 * most they hold in streaming memory at once, per IPU.
 */
export function activationPeaks(request: PeakRequest, storage: TensorStorage, bytesOf: (id: number) => number): { peaks: MemoryPeak[]; offChipStash: number[] } {
  const { graph, placement, schedule } = request;
  const valueCount = graph.values.length;
  const base = (id: number) => (id >= valueCount ? id - valueCount : id);
  const ipuCount = placement.ipusPerReplica;
  const ipuOfNode = (node: number) => placement.stages[placement.nodeStages[node]!]!.ipu;
  const temporaryOf = request.kernelTemporary ?? (() => 0);
  const isView = request.isView ?? isViewNode;
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
  const storages = new Map<number, readonly Storage[]>();
  const storageOn = (id: number, ipu: number): readonly Storage[] => {
    const key = id * ipuCount + ipu;
    const known = storages.get(key);
    if (known) return known;
    let result: readonly Storage[];
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
        result = node && isView(graph, node) ? distinctStorage(node.inputs, (input) => storageOn(readsCopies ? copyOf(input) : input, ipu)) : one();
      } else {
        result = one(storageOn(id, from));
      }
    }
    storages.set(key, result);
    return result;
  };

  // Readers of each storage (per micro-batch): the executions that read it on its IPU, and the copies made of it.
  const readerCount = new Map<number, { all: number; forward: number }>();
  const countReader = (s: Storage, forward: boolean) => {
    const r = readerCount.get(s.key) ?? { all: 0, forward: 0 };
    r.all++;
    if (forward) r.forward++;
    readerCount.set(s.key, r);
  };
  // The copies of each value (by id, recomputed copies included) to the other IPUs that read it.
  const copiesOf = new Map<number, Storage[]>();
  const accumulated = accumulatedPartialGradients(request);
  const placed = (execution: Execution): PlacedExecution => {
    const ipu = ipuOfNode(execution.node);
    const on = (id: number) => storageOn(id, ipu);
    return {
      execution,
      node: graph.nodes[execution.node]!,
      ipu,
      inputs: distinctStorage(accumulated.size > 0 ? execution.inputs.filter((id) => !accumulated.has(id)) : execution.inputs, on),
      outputs: distinctStorage(execution.outputs, on),
    };
  };
  const unitRuns = unitExecutions.map((executions) => executions.map(placed));
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

  const stashOffChip = (placement.phased?.liveness ?? 'AlwaysLive') !== 'AlwaysLive';
  const stashRule = storage.activation;
  const live = new Array<number>(ipuCount).fill(0);
  const offChip = new Array<number>(ipuCount).fill(0);
  const offChipPeak = new Array<number>(ipuCount).fill(0);
  /** The peak of each IPU, with the running node and the label of its unit and micro-batch. */
  const peaks: Array<Omit<MemoryPeak, 'during'> & { readonly at?: { readonly node: Node; readonly label: string } }> = Array.from({ length: ipuCount }, () => ({
    stashed: 0,
    microBatchesInFlight: 0,
    working: 0,
    temporary: 0,
  }));
  const peakTotal = new Array<number>(ipuCount).fill(0);
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
  // Held storage by micro-batch and storage key (storage made once per step under micro-batch -1).
  const keySpace = 2 * valueCount * ipuCount;
  const held = new Map<number, Held>();
  // The same storage by micro-batch, for what a unit moves on or off chip.
  const heldByMicroBatch = new Map<number, Set<Held>>();
  const heldOf = (mb: number): ReadonlySet<Held> => heldByMicroBatch.get(mb) ?? new Set();
  const heldKey = (mb: number, s: Storage) => (s.perStep ? s.key : (mb + 1) * keySpace + s.key);
  // What is stashed (see isStashed) on each IPU, kept up to date as held storage changes.
  const stashedBytes = new Array<number>(ipuCount).fill(0);
  const stashedMicroBatches = Array.from({ length: ipuCount }, () => new Map<number, number>());
  const isStashed = (h: Held) => h.onChip && h.madeForward && h.forwardReaders <= 0 && h.readers > 0 && h.microBatch >= 0;
  const count = (h: Held, stashed: boolean) => {
    if (h.counted === stashed) return;
    h.counted = stashed;
    const ipu = h.storage.ipu;
    stashedBytes[ipu]! += stashed ? h.storage.bytes : -h.storage.bytes;
    const inFlight = stashedMicroBatches[ipu]!;
    const n = (inFlight.get(h.microBatch) ?? 0) + (stashed ? 1 : -1);
    if (n === 0) inFlight.delete(h.microBatch);
    else inFlight.set(h.microBatch, n);
  };
  const setOnChip = (h: Held, onChip: boolean) => {
    if (h.onChip === onChip) return;
    h.onChip = onChip;
    live[h.storage.ipu]! += onChip ? h.storage.bytes : -h.storage.bytes;
    count(h, isStashed(h));
  };
  const release = (k: number, h: Held) => {
    setOnChip(h, false);
    if (h.stashedOffChip) moveStash(h, false);
    held.delete(k);
    heldByMicroBatch.get(h.microBatch)?.delete(h);
    count(h, false);
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
    count(h, isStashed(h));
    if (h.readers <= 0) release(k, h);
  };
  const hold = (mb: number, s: Storage, forward: boolean) => {
    const k = heldKey(mb, s);
    if (held.has(k)) return;
    const r = readerCount.get(s.key) ?? { all: 0, forward: 0 };
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
    held.set(k, h);
    const ofMicroBatch = heldByMicroBatch.get(h.microBatch);
    if (ofMicroBatch) ofMicroBatch.add(h);
    else heldByMicroBatch.set(h.microBatch, new Set([h]));
    setOnChip(h, true);
    if (s.copyOf) for (const source of s.copyOf) read(mb, source, forward);
  };
  const recordMoment = (ipu: number, temporary: number, node: Node, label: string) => {
    const total = live[ipu]! + temporary;
    if (total <= peakTotal[ipu]!) return;
    peakTotal[ipu] = total;
    const stashed = stashedBytes[ipu]!;
    peaks[ipu] = { stashed, microBatchesInFlight: stashedMicroBatches[ipu]!.size, working: live[ipu]! - stashed, temporary, at: { node, label } };
  };
  const offChipStash = (h: Held) => stashOffChip || (request.training && stashRule.offChip && h.storage.elements >= stashRule.minElementsForOffChip);

  for (const step of schedule.steps) {
    // Values read on other IPUs in later steps are copied over at the end of the step that made them.
    const pendingCopies: Array<{ microBatch: number; copy: Storage; forward: boolean }> = [];
    for (const work of step.work) {
      const unit = placement.units[work.unit]!;
      const label = `${unit.pass === 'forward' ? 'F' : 'B'}${unit.stages.join('+')}:${work.microBatch}`;
      // An off-chip stash of this micro-batch comes back for its backward pass.
      if (unit.pass === 'backward') for (const h of heldOf(work.microBatch)) moveStash(h, false);
      for (const { execution, node, ipu, inputs, outputs: made } of unitRuns[work.unit]!) {
        for (const s of inputs) hold(work.microBatch, s, execution.forward);
        const outputs = made.filter((s) => !held.has(heldKey(work.microBatch, s)));
        for (const s of outputs) hold(work.microBatch, s, execution.forward);
        recordMoment(ipu, temporaryOf(node), node, label);
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
        for (const h of heldOf(work.microBatch)) if (h.forwardReaders <= 0 && offChipStash(h)) moveStash(h, true);
      }
    }
    for (const { microBatch, copy, forward } of pendingCopies) hold(microBatch, copy, forward);
  }
  return {
    peaks: peaks.map(({ at, ...peak }) => ({ ...peak, during: at ? `${scopedName(at.node.kernel, at.node.annotations.scope)} in ${at.label}` : '-' })),
    offChipStash: offChipPeak,
  };
}
