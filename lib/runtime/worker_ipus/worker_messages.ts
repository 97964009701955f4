/**
 * The messages between the main thread and a worker IPU (a simulated IPU
 * running in its own `node:worker_threads` thread).
 *
 * Main posts work items in schedule order on a dedicated `MessageChannel`;
 * the worker runs each on its own tfjs backend and posts one reply per item
 * (or one failure), then bumps a shared counter and notifies it, so the main
 * thread can block on `Atomics.wait` and read replies synchronously with
 * `receiveMessageOnPort`.
 */
import type { MessagePort } from 'node:worker_threads';
import type { NodeId, ValueId } from '../../ir/graph.js';
import type { Float16Arithmetic } from '../../executable/float16_arithmetic_settings.js';
import type { HostMemoryContext } from '../../host_memory/host_memory_error.js';
import type { WireTensor } from './wire_tensor.js';

/** Index of the reply counter in the shared signal array. */
export const REPLY_COUNTER = 0;
/** The state word of worker `k` in the shared signal array is at `WORKER_STATE + k`. */
export const WORKER_STATE = 1;
/** State words: starting, running, stopped (the thread exited). */
export const WorkerState = { starting: 0, running: 1, stopped: 2 } as const;

/** What a worker is started with (its `workerData`). */
export interface WorkerSetup {
  /** The IPU (within a replica) this worker simulates. */
  readonly ipu: number;
  /** Its slot in the signal array. */
  readonly slot: number;
  /** The tfjs backend to compute on: the main thread's. */
  readonly backend: string;
  /** The graph as a protobuf `Graph` message (lib/proto/executable.proto). */
  readonly graph: Uint8Array;
  /** The float16 arithmetic of the executable. */
  readonly float16: Float16Arithmetic;
  /** Where this worker computes, for the error when its heap runs out. */
  readonly memory: HostMemoryContext;
  /** The nodes of each unit this worker runs, in graph order, by unit index. */
  readonly unitNodes: Readonly<Record<number, readonly NodeId[]>>;
  /** The worker's end of its channel with the main thread. */
  readonly port: MessagePort;
  /** `Int32Array` over it: the reply counter, then one state word per worker. */
  readonly signal: SharedArrayBuffer;
}

/** A weight the worker must hold for a replica: its main-thread key, and its elements unless the worker already holds that key. */
export interface WeightUpdate {
  /** The parameter's name. */
  readonly param: string;
  /** The replica that holds this value. */
  readonly replica: number;
  /** Identifies the weight's data on the main thread (copy-on-write clones share a key). */
  readonly key: number;
  /** The weight's elements, when the worker does not hold `key` yet. */
  readonly tensor?: WireTensor;
}

/** Run one unit on one micro-batch of one replica. */
export interface WorkMessage {
  /** What the message is. */
  readonly kind: 'work';
  /** Sequence number, echoed in the reply. */
  readonly seq: number;
  /** The unit to run (an index into the placement's units). */
  readonly unit: number;
  /** The replica whose weights it computes with. */
  readonly replica: number;
  /** The micro-batch (of the replica's schedule run) it works on. */
  readonly microBatch: number;
  /** Graph inputs the unit reads that this worker does not hold yet for the micro-batch, by input index. */
  readonly inputs: ReadonlyArray<readonly [number, WireTensor]>;
  /** Values made by units on other IPUs that the unit reads. */
  readonly values: ReadonlyArray<readonly [ValueId, WireTensor]>;
  /** Weights that changed since the worker last saw them. */
  readonly weights: readonly WeightUpdate[];
  /** The numbers of the unit's random pseudo-kernels, drawn on the main thread, in node order. */
  readonly random: readonly Float32Array[];
  /** Values to send back after the unit: roots it makes, and values units on other IPUs read. */
  readonly exports: readonly ValueId[];
  /** True for the last unit of the micro-batch on this worker: free its environment afterwards. */
  readonly release: boolean;
}

/** Forget every micro-batch environment and weight copy (after a failed call). */
export interface ResetMessage {
  /** What the message is. */
  readonly kind: 'reset';
}

/** A message from the main thread to a worker. */
export type MainMessage = WorkMessage | ResetMessage;

/** The worker is ready to run work. */
export interface ReadyReply {
  /** What the message is. */
  readonly kind: 'ready';
}

/** A work item finished. */
export interface DoneReply {
  /** What the message is. */
  readonly kind: 'done';
  /** The item's sequence number. */
  readonly seq: number;
  /** The values the item exports. */
  readonly values: ReadonlyArray<readonly [ValueId, WireTensor]>;
  /** Milliseconds from receiving the item to posting the reply. */
  readonly busyMs: number;
  /** Of those, milliseconds spent running the unit's nodes. */
  readonly computeMs: number;
}

/** A work item (or the worker's start) failed. */
export interface FailedReply {
  /** What the message is. */
  readonly kind: 'failed';
  /** The failed item; absent when the worker failed to start. */
  readonly seq?: number;
  /** The error's message. */
  readonly message: string;
  /** The `PoptfjsError` type of the original error, if it was one. */
  readonly type?: string;
  /** The `PoptfjsError` location of the original error, if it was one. */
  readonly location?: string;
  /** The node that was running. */
  readonly node?: NodeId;
}

/** A message from a worker to the main thread. */
export type WorkerReply = ReadyReply | DoneReply | FailedReply;
