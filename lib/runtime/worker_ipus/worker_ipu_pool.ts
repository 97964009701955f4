/**
 * The worker IPUs of one executable: one thread per IPU that runs nodes, all
 * started together, and the main thread's blocking wait for their replies
 * (`Atomics.wait` on a shared counter every worker bumps after posting, then
 * `receiveMessageOnPort`), which keeps a call synchronous like in-process
 * execution. A thread that exits is noticed through its state word.
 */
import { wasmThreads } from '../../backend/wasm_threads.js';
import { PoptfjsError } from '../../common/errors.js';
import type { Executable } from '../../executable/executable.js';
import { encodeMessage, Messages } from '../../proto/executable_proto.js';
import { graphMessage } from '../../proto/graph_message.js';
import { executableMemoryContext } from '../../host_memory/host_memory_error.js';
import { DEFAULT_FLOAT16_ARITHMETIC, type Float16Arithmetic } from '../../executable/float16_arithmetic_settings.js';
import type { UnitDataflow } from './unit_dataflow.js';
import { WorkerIpu } from './worker_ipu.js';
import { REPLY_COUNTER, WORKER_STATE, WorkerState, type WorkerReply } from './worker_messages.js';
import { ipuWorkerScript, type WorkerScript } from './worker_script.js';

/** How long one `Atomics.wait` sleeps before the state words are looked at again, in ms. */
const WAIT_SLICE_MS = 1000;
/** How long the threads may take to start (load tfjs and the program, initialise the backend), in ms. */
const START_TIMEOUT_MS = 120_000;

/** A worker thread exited while the main thread expected replies from it. */
export class WorkerStoppedError extends PoptfjsError {
  /**
   * @param ipu the IPU whose thread stopped
   * @param during when: 'during a call', 'while starting'
   */
  constructor(
    readonly ipu: number,
    during: string,
  ) {
    super(`the worker thread of IPU ${ipu} stopped ${during}; the next call starts new worker threads`, { type: 'runtime', location: `IPU ${ipu}` });
  }
}

/** The float16 arithmetic of an executable, as its interpreter uses it. */
function float16Of(executable: Executable): Float16Arithmetic {
  const n = executable.numerics ?? DEFAULT_FLOAT16_ARITHMETIC;
  return { stochasticRounding: n.stochasticRounding, floatingPointExceptions: n.floatingPointExceptions, halfPartials: n.halfPartials, halfFloatCasting: n.halfFloatCasting };
}

/** The worker threads of one executable. */
export class WorkerIpuPool {
  /** By IPU. */
  readonly workers = new Map<number, WorkerIpu>();
  private readonly signal: Int32Array;
  private sequence = 0;

  /**
   * Starts one thread per IPU of `dataflow` (see {@link WorkerIpuPool.waitUntilReady}).
   * @param script the program the threads run (the worker IPU program unless a test gives another)
   */
  constructor(executable: Executable, dataflow: UnitDataflow, backend: string, script: WorkerScript = ipuWorkerScript()) {
    const shared = new SharedArrayBuffer(4 * (WORKER_STATE + dataflow.ipus.length));
    this.signal = new Int32Array(shared);
    const graph = encodeMessage(Messages.Graph, graphMessage(executable.graph));
    const float16 = float16Of(executable);
    // The main thread's wasm threads are shared among the worker IPUs, at least one each.
    const threads = Math.max(1, Math.floor(wasmThreads() / dataflow.ipus.length));
    dataflow.ipus.forEach((ipu, slot) => {
      const unitNodes: Record<number, number[]> = {};
      dataflow.units.forEach((flow, u) => {
        if (flow.ipu === ipu && flow.nodes.length > 0) unitNodes[u] = flow.nodes.map((n) => n.id);
      });
      const memory = { ...executableMemoryContext(executable, 'running', true), worker: ipu };
      this.workers.set(ipu, new WorkerIpu(ipu, script, { ipu, slot, backend, graph, float16, memory, unitNodes, signal: shared }, threads));
    });
  }

  /** A fresh sequence number for a work item. */
  nextSequence(): number {
    return this.sequence++;
  }

  /** Blocks until every worker reported ready; an error naming the IPU if one failed to start, or if they take longer than `timeoutMs`. */
  waitUntilReady(timeoutMs = START_TIMEOUT_MS): void {
    const waiting = new Set(this.workers.values());
    const deadline = performance.now() + timeoutMs;
    while (waiting.size > 0) {
      const replies = this.receive('while starting', deadline);
      if (replies === undefined) throw new PoptfjsError(`the worker threads did not start within ${(timeoutMs / 1000).toFixed(0)} s`, { type: 'runtime' });
      for (const [worker, reply] of replies) {
        if (reply.kind === 'ready') waiting.delete(worker);
        else if (reply.kind === 'failed')
          throw new PoptfjsError(`the worker thread of IPU ${worker.ipu} failed to start: ${reply.message}`, { type: 'runtime', location: `IPU ${worker.ipu}` });
      }
    }
  }

  /**
   * Blocks until at least one worker replied and returns every reply
   * waiting, with its worker; undefined if `deadline` (a `performance.now()`
   * time) passes first. A {@link WorkerStoppedError} if a worker's thread
   * exited with nothing left to read.
   */
  receive(during: string, deadline: number): Array<[WorkerIpu, WorkerReply]> | undefined;
  receive(during?: string): Array<[WorkerIpu, WorkerReply]>;
  receive(during = 'during a call', deadline = Infinity): Array<[WorkerIpu, WorkerReply]> | undefined {
    for (;;) {
      const seen = Atomics.load(this.signal, REPLY_COUNTER);
      const replies = this.poll();
      if (replies.length > 0) return replies;
      for (const worker of this.workers.values()) if (worker.state === WorkerState.stopped) throw new WorkerStoppedError(worker.ipu, during);
      const left = deadline - performance.now();
      if (left <= 0) return undefined;
      Atomics.wait(this.signal, REPLY_COUNTER, seen, Math.min(WAIT_SLICE_MS, left));
    }
  }

  /** Every reply waiting now, with its worker (does not block). */
  poll(): Array<[WorkerIpu, WorkerReply]> {
    const replies: Array<[WorkerIpu, WorkerReply]> = [];
    for (const worker of this.workers.values()) {
      for (let reply = worker.poll(); reply; reply = worker.poll()) replies.push([worker, reply]);
    }
    return replies;
  }

  /** Tells every worker to forget its micro-batch environments and weight copies (after a failed call). */
  reset(): void {
    for (const worker of this.workers.values()) {
      worker.post({ kind: 'reset' });
      worker.held.clear();
    }
  }

  /** Ends every thread. */
  terminate(): void {
    for (const worker of this.workers.values()) worker.terminate();
  }
}
