/**
 * The messages between the main thread and the MPI thread. The main thread
 * posts requests on a message channel; the MPI thread answers each, in order,
 * with one reply on the same channel, then bumps a shared counter
 * ({@link REPLY_COUNTER}) and wakes its waiters, so the main thread can
 * block on `Atomics.wait` (a call inside a training step) or await
 * `Atomics.waitAsync` (leaving the event loop free) and read the reply with
 * `receiveMessageOnPort`. Data goes both ways in `SharedArrayBuffer`s, which
 * the MPI library reads and writes directly.
 */
import type { MessagePort } from 'node:worker_threads';

/** The index, in the shared signal words, of the count of replies posted. */
export const REPLY_COUNTER = 0;

/** What the MPI thread is started with. */
export interface MpiThreadSetup {
  /** One Int32 word: {@link REPLY_COUNTER}. */
  readonly signal: SharedArrayBuffer;
  readonly port: MessagePort;
}

/** A request to the MPI thread. */
export type MpiRequest =
  /** Sums `data` (float32) over every process, in place. */
  | { readonly kind: 'allReduceSum'; readonly data: SharedArrayBuffer; readonly offset: number; readonly length: number }
  /** Gives every process the bytes of process `root`, in place. */
  | { readonly kind: 'broadcast'; readonly data: SharedArrayBuffer; readonly offset: number; readonly length: number; readonly root: number }
  | { readonly kind: 'barrier' }
  /** Ends every process of the run with `code`. */
  | { readonly kind: 'abort'; readonly code: number }
  /** Finalizes MPI; the thread then ends. */
  | { readonly kind: 'finalize' };

/** A reply of the MPI thread. */
export type MpiReply =
  /** MPI is initialised: this process's rank among `size`. */
  | { readonly kind: 'ready'; readonly rank: number; readonly size: number; readonly implementation: string; readonly library: string }
  | { readonly kind: 'done' }
  | { readonly kind: 'failed'; readonly message: string };
