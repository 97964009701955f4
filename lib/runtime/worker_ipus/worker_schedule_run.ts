/**
 * One replica's pass over the schedule with its units on worker IPUs.
 *
 * The main thread walks the work items in schedule order. Before it posts an
 * item it waits (sleeping, on `Atomics.wait`) until what the item needs has
 * arrived: values made by units on other IPUs, and weights written by earlier
 * items (buffers). It then calls the device's `beforeWork` (faults), draws
 * the item's random numbers and posts it with the inputs, values and changed
 * weights it needs. Items need not wait for a step to end, so each worker
 * keeps busy as long as its inputs are there; the items of a pipeline step
 * run at the same time on their IPUs.
 *
 * Replies may come back in any order; the main thread takes their results in
 * schedule order (roots into the micro-batch's environment, then the
 * caller's `complete`: buffer writes, output collection and gradient
 * accumulation), so everything it does happens in the order of in-process
 * execution and gives the same numbers.
 *
 * If an item fails (or `beforeWork` raises a fault), the items before it
 * are completed as in-process execution would have, every reply still due is
 * collected, the workers forget their environments, and the error is thrown.
 */
import type * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../../common/errors.js';
import type { Graph, ValueId } from '../../ir/graph.js';
import type { Placement } from '../../strategy/placement.js';
import type { Schedule, ScheduledWork } from '../../strategy/schedule.js';
import type { GraphEnvironment } from '../graph_interpreter.js';
import { describeNode } from '../node_description.js';
import type { RandomSource } from '../../executable/random_source.js';
import type { OverlapMeasurement } from './measured_overlap.js';
import { drawUnitRandomNumbers } from './random_draws.js';
import type { UnitDataflow } from './unit_dataflow.js';
import { tensorFromWire, transferList, wireBytes, wireTensor, type WireTensor } from './wire_tensor.js';
import type { WorkerIpu } from './worker_ipu.js';
import { WorkerStoppedError, type WorkerIpuPool } from './worker_ipu_pool.js';
import type { DoneReply, FailedReply, WeightUpdate, WorkMessage } from './worker_messages.js';

/** A work item of the schedule, with where it sits and what ends with it. */
export interface PlannedItem {
  /** The unit and micro-batch. */
  readonly work: ScheduledWork;
  /** The schedule step it belongs to. */
  readonly step: number;
  /** Its index in the step. */
  readonly index: number;
  /** The last item of its micro-batch on its IPU: the worker frees the micro-batch's environment after it. */
  readonly release: boolean;
  /** The last item of its micro-batch. */
  readonly lastOfMicroBatch: boolean;
}

/** The work items of `schedule` in order, with their release points. */
export function plannedItems(schedule: Schedule, dataflow: UnitDataflow): PlannedItem[] {
  const items = schedule.steps.flatMap((step, t) => step.work.map((work, index) => ({ work, step: t, index })));
  const lastOnIpu = new Map<string, number>();
  const lastOfMicroBatch = new Map<number, number>();
  items.forEach((item, k) => {
    const flow = dataflow.units[item.work.unit]!;
    if (flow.nodes.length > 0) lastOnIpu.set(`${flow.ipu}:${item.work.microBatch}`, k);
    lastOfMicroBatch.set(item.work.microBatch, k);
  });
  return items.map((item, k) => {
    const flow = dataflow.units[item.work.unit]!;
    return {
      ...item,
      release: flow.nodes.length > 0 && lastOnIpu.get(`${flow.ipu}:${item.work.microBatch}`) === k,
      lastOfMicroBatch: lastOfMicroBatch.get(item.work.microBatch) === k,
    };
  });
}

/** What the caller (the loaded executable) does on the main thread around the work items. */
export interface ScheduleHooks {
  /** The main-thread environment of a micro-batch (its inputs, the replica's weights), opened on its first item. */
  open(microBatch: number): GraphEnvironment;
  /** Called before an item is posted, in schedule order (device faults). */
  beforeWork(unit: number): void;
  /** Takes the results of an item, in schedule order, after its roots are in the micro-batch's environment. */
  complete(work: ScheduledWork, step: number, index: number): void;
}

/** What a run shares with the executable's other runs. */
export interface WorkerRunContext {
  /** The worker threads. */
  readonly pool: WorkerIpuPool;
  /** What crosses between threads, per unit. */
  readonly dataflow: UnitDataflow;
  /** The schedule's work items, in order. */
  readonly items: readonly PlannedItem[];
  /** The executable's graph (for error messages). */
  readonly graph: Graph;
  /** The executable's placement (for error messages). */
  readonly placement: Placement;
  /** The executable's generator, which the random pseudo-kernels draw from. */
  readonly random: RandomSource;
  /** Where the call's measurements go. */
  readonly measurement: OverlapMeasurement;
  /** The key of a weight's data (copy-on-write clones share it). */
  keyOf(t: tf.Tensor): number;
  /** Ends the worker threads (one of them stopped); the next call starts new ones. */
  stopPool(): void;
}

/** An item a worker failed. */
class ItemFailure extends Error {
  constructor(
    readonly item: number,
    readonly ipu: number,
    readonly reply: FailedReply,
  ) {
    super(reply.message);
  }
}

/** An error thrown while taking an item's results on the main thread: nothing more is completed. */
class CompletionFailure extends Error {
  constructor(readonly error: unknown) {
    super('completion failed');
  }
}

/** The micro-batch's values on one worker, as the main thread knows them. */
interface HeldOnWorker {
  readonly inputs: Set<number>;
  readonly values: Set<ValueId>;
}

const NO_VALUES: DoneReply = { kind: 'done', seq: -1, values: [], busyMs: 0, computeMs: 0 };

/** One replica's pass over the schedule on the worker IPUs. */
export class WorkerScheduleRun {
  private readonly envs: GraphEnvironment[] = [];
  private readonly itemOfSequence = new Map<number, number>();
  private readonly replies = new Map<number, DoneReply | FailedReply>();
  /** Values made on workers, by micro-batch, for units on other IPUs (and roots until taken). */
  private readonly relay = new Map<number, Map<ValueId, WireTensor>>();
  private readonly held = new Map<number, Map<number, HeldOnWorker>>();
  /** The last item writing each buffer. */
  private readonly lastWriter = new Map<string, number>();
  private dispatched = 0;
  private completed = 0;
  private outstanding = 0;
  private failed: ItemFailure | undefined;

  constructor(
    private readonly context: WorkerRunContext,
    private readonly replica: number,
    private readonly hooks: ScheduleHooks,
  ) {}

  /** Runs every item; throws what failed, after settling the run. */
  run(): void {
    const { items } = this.context;
    try {
      for (let k = 0; k < items.length; k++) {
        this.dispatch(k);
        this.take(this.context.pool.poll());
        this.completeReady();
      }
      this.waitUntil(() => this.completed === items.length);
    } catch (error) {
      this.abort(error);
    }
  }

  private heldOn(ipu: number, microBatch: number): HeldOnWorker {
    let perMicroBatch = this.held.get(ipu);
    if (!perMicroBatch) this.held.set(ipu, (perMicroBatch = new Map()));
    let held = perMicroBatch.get(microBatch);
    if (!held) perMicroBatch.set(microBatch, (held = { inputs: new Set(), values: new Set() }));
    return held;
  }

  private relayOf(microBatch: number): Map<ValueId, WireTensor> {
    let relay = this.relay.get(microBatch);
    if (!relay) this.relay.set(microBatch, (relay = new Map()));
    return relay;
  }

  private dispatch(k: number): void {
    const { dataflow, pool, measurement } = this.context;
    const item = this.context.items[k]!;
    const { unit, microBatch } = item.work;
    const flow = dataflow.units[unit]!;
    const env = this.hooks.open(microBatch);
    this.envs[k] = env;
    if (flow.nodes.length === 0) {
      this.hooks.beforeWork(unit);
      this.replies.set(k, NO_VALUES);
      this.dispatched = k + 1;
      return;
    }
    const worker = pool.workers.get(flow.ipu)!;
    const held = this.heldOn(flow.ipu, microBatch);
    const missing = flow.imports.filter((id) => !held.values.has(id));
    this.waitUntil(() => missing.every((id) => this.relay.get(microBatch)?.has(id)) && flow.params.every((p) => (this.lastWriter.get(p) ?? -1) < this.completed));
    this.hooks.beforeWork(unit);
    const started = performance.now();
    const random = drawUnitRandomNumbers(flow.nodes, this.context.random);
    const inputs = flow.inputs.filter((i) => !held.inputs.has(i)).map((i): [number, WireTensor] => [i, wireTensor(env.feeds.inputs[i]!)]);
    const relay = this.relayOf(microBatch);
    const values = missing.map((id): [ValueId, WireTensor] => [id, relay.get(id)!]);
    const weights = this.weightUpdates(worker, flow.params, env.feeds.params);
    const seq = pool.nextSequence();
    const message: WorkMessage = { kind: 'work', seq, unit, replica: this.replica, microBatch, inputs, values, weights, random, exports: flow.exports, release: item.release };
    const fresh = [...inputs.map(([, w]) => w), ...weights.flatMap((w) => (w.tensor ? [w.tensor] : [])), ...random];
    const bytes = wireBytes(fresh) + wireBytes(values.map(([, w]) => w));
    // Fresh buffers are handed over; relayed values are copied (the main thread may still need them).
    worker.post(message, transferList(fresh));
    this.itemOfSequence.set(seq, k);
    this.outstanding++;
    for (const [i] of inputs) held.inputs.add(i);
    for (const id of missing) held.values.add(id);
    if (item.release) this.held.get(flow.ipu)!.delete(microBatch);
    for (const param of flow.assigns) this.lastWriter.set(param, k);
    measurement.mainTransfer(performance.now() - started, bytes);
    this.dispatched = k + 1;
  }

  /** The weights `worker` must be sent for `params`: those whose data changed since it last got them. */
  private weightUpdates(worker: WorkerIpu, params: readonly string[], weights: ReadonlyMap<string, tf.Tensor>): WeightUpdate[] {
    const updates: WeightUpdate[] = [];
    for (const param of params) {
      const t = weights.get(param);
      if (!t) throw new PoptfjsError(`no device value for parameter '${param}' on replica ${this.replica}`, { type: 'runtime' });
      const key = this.context.keyOf(t);
      if (worker.held.keyOf(this.replica, param) === key) continue;
      updates.push({ param, replica: this.replica, key, ...(worker.held.has(key) ? {} : { tensor: wireTensor(t) }) });
      worker.held.set(this.replica, param, key, true);
    }
    return updates;
  }

  /** Files replies as they come: values for other IPUs go to the relay at once; results wait for their turn. */
  private take(replies: ReturnType<WorkerIpuPool['poll']>): void {
    for (const [worker, reply] of replies) {
      if (reply.kind === 'ready' || reply.seq === undefined) continue;
      const k = this.itemOfSequence.get(reply.seq);
      if (k === undefined) continue;
      this.itemOfSequence.delete(reply.seq);
      this.outstanding--;
      this.replies.set(k, reply);
      if (reply.kind === 'failed') {
        if (!this.failed || k < this.failed.item) this.failed = new ItemFailure(k, worker.ipu, reply);
        continue;
      }
      const relay = this.relayOf(this.context.items[k]!.work.microBatch);
      for (const [id, w] of reply.values) relay.set(id, w);
      this.context.measurement.workItem(worker.ipu, reply.busyMs, reply.computeMs, wireBytes(reply.values.map(([, w]) => w)));
    }
  }

  private completeReady(): void {
    while (this.completed < this.dispatched && this.replies.has(this.completed)) this.completeItem(this.completed);
  }

  private completeItem(k: number): void {
    const reply = this.replies.get(k)!;
    if (reply.kind === 'failed') throw this.failed!;
    this.replies.delete(k);
    const item = this.context.items[k]!;
    try {
      const started = performance.now();
      const env = this.envs[k]!;
      for (const [id, w] of reply.values) if (this.context.dataflow.roots.has(id)) env.store(id, tensorFromWire(w));
      this.context.measurement.mainTransfer(performance.now() - started);
      this.hooks.complete(item.work, item.step, item.index);
    } catch (error) {
      throw new CompletionFailure(error);
    }
    if (item.lastOfMicroBatch) this.relay.delete(item.work.microBatch);
    delete this.envs[k];
    this.completed = k + 1;
  }

  /** Receives and completes until `condition` holds (or a worker failed). */
  private waitUntil(condition: () => boolean): void {
    while (!condition()) {
      if (this.failed) throw this.failed;
      this.take(this.context.pool.receive());
      this.completeReady();
    }
  }

  /**
   * Settles a run that failed with `error`: collects every reply still due,
   * completes the items before the first failure (as in-process execution
   * would have run them), has the workers forget their environments, and
   * throws the first failure in schedule order.
   */
  private abort(error: unknown): never {
    if (error instanceof WorkerStoppedError) {
      this.context.stopPool();
      throw error;
    }
    let first = error;
    try {
      while (this.outstanding > 0) this.take(this.context.pool.receive());
      if (!(error instanceof CompletionFailure)) {
        if (this.failed) first = this.failed;
        const stop = this.failed ? this.failed.item : this.dispatched;
        while (this.completed < stop) this.completeItem(this.completed);
      }
    } catch (later) {
      if (later instanceof WorkerStoppedError) {
        this.context.stopPool();
        throw later;
      }
      first = later;
    }
    this.context.pool.reset();
    if (first instanceof CompletionFailure) throw first.error;
    if (first instanceof ItemFailure) throw this.itemError(first);
    throw first;
  }

  /** A worker's failure as the error a caller sees: the IPU, the unit, the micro-batch and the node. */
  private itemError(failure: ItemFailure): PoptfjsError {
    const { graph, placement } = this.context;
    const { reply, ipu } = failure;
    const { unit, microBatch } = this.context.items[failure.item]!.work;
    const placed = placement.units[unit]!;
    const label = `${placed.pass === 'forward' ? 'F' : 'B'}${placed.stages.join('+')}`;
    const node = reply.node !== undefined ? graph.nodes[reply.node] : undefined;
    const where = node && !reply.message.includes(`node #${node.id} `) ? ` (${describeNode(node)})` : '';
    return new PoptfjsError(`IPU ${ipu} (worker thread), unit ${label} on micro-batch ${microBatch} of replica ${this.replica}: ${reply.message}${where}`, {
      type: reply.type ?? 'runtime',
      location: reply.location || (node ? (node.annotations.layer ?? node.kernel) : `IPU ${ipu}`),
    });
  }
}
