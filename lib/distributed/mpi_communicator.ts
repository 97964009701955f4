/**
 * `MPI_COMM_WORLD` as the main thread sees it: every MPI call runs on a
 * dedicated thread (mpi_thread.ts), the data passed in `SharedArrayBuffer`s.
 * Each collective has two forms: a promise (`allReduceSum`, `broadcast`,
 * `barrier`), which leaves the event loop free while MPI works, and a
 * blocking one (`...Sync`), for the synchronous training step, which sleeps
 * on `Atomics.wait` until the MPI thread replies. Requests are carried out in
 * the order they are made, whichever form made them.
 *
 * There is one per process ({@link mpiWorld}): MPI is initialised once, when
 * it is first asked for, and finalized when the process exits.
 */
import { MessageChannel, Worker, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { PoptfjsError } from '../common/errors.js';
import { getLogger } from '../common/log.js';
import { threadProgramScript } from '../runtime/worker_ipus/worker_script.js';
import { REPLY_COUNTER, type MpiReply, type MpiRequest, type MpiThreadSetup } from './mpi_messages.js';

const log = getLogger('poptfjs');

/** The longest the MPI thread may take to load and initialise MPI, in ms. */
const START_TIMEOUT_MS = 120_000;

/**
 * UCX, the transport of Debian's MPICH, patches mmap, munmap and malloc to
 * watch memory for its registration cache; that patching races with V8's own
 * memory management on the other threads of this process (a node process was
 * seen to crash in a heap write barrier while an MPI call ran). The
 * shared-memory and TCP transports of a run need no registration cache, so
 * the hooks are switched off unless the environment sets these variables.
 */
const UCX_WITHOUT_MEMORY_HOOKS: Readonly<Record<string, string>> = { UCX_MEM_MALLOC_HOOKS: 'no', UCX_MEM_MMAP_HOOK_MODE: 'none' };

/** `Atomics.waitAsync` (in Node since 16; typed from ES2024 on, later than this project's `lib`). */
const waitAsync = (
  Atomics as unknown as {
    waitAsync(array: Int32Array, index: number, value: number): { async: boolean; value: Promise<string> | string };
  }
).waitAsync;

/** A view of float32 or byte data on a `SharedArrayBuffer`. */
type SharedView = Float32Array | Uint8Array;

/** A copy of `data` on a `SharedArrayBuffer` (or `data` itself when it already is on one). */
function shared<T extends SharedView>(data: T, make: (buffer: SharedArrayBuffer) => T): T {
  if (data.buffer instanceof SharedArrayBuffer) return data;
  const copy = make(new SharedArrayBuffer(data.byteLength));
  copy.set(data as never);
  return copy;
}

/** This process's place in an MPI run, and the collectives over all its processes. */
export class MpiCommunicator {
  /** This process's rank in `MPI_COMM_WORLD`, from 0. */
  readonly rank: number;
  /** The number of processes in `MPI_COMM_WORLD`. */
  readonly size: number;
  /** The implementation found: `MPICH` or `Open MPI`. */
  readonly implementation: string;
  /** The library file it was loaded from. */
  readonly library: string;
  private readonly thread: Worker;
  private readonly port: MessagePort;
  private readonly signal: Int32Array;
  private sent = 0;
  private received = 0;
  private readonly replies = new Map<number, MpiReply>();
  private asyncWaiters = 0;
  private finalized = false;

  private constructor() {
    const channel = new MessageChannel();
    this.port = channel.port1;
    this.port.unref();
    const signal = new SharedArrayBuffer(4);
    this.signal = new Int32Array(signal);
    // Set here, on the main thread: a worker's process.env is its own copy, not the environment MPI reads.
    for (const [name, value] of Object.entries(UCX_WITHOUT_MEMORY_HOOKS)) process.env[name] ??= value;
    const script = threadProgramScript(import.meta.url, 'mpi_thread', 'MPI thread program');
    const workerData: MpiThreadSetup = { signal, port: channel.port2 };
    this.thread = new Worker(script.filename, { eval: script.eval, workerData, transferList: [channel.port2] });
    this.thread.unref();
    this.thread.on('error', (error) => log.debug(`the MPI thread failed: ${error instanceof Error ? error.message : String(error)}`));
    const ready = this.replyOf(++this.sent, START_TIMEOUT_MS, 'starting MPI');
    if (ready.kind !== 'ready') {
      void this.thread.terminate();
      throw new PoptfjsError(`cannot start MPI: ${ready.kind === 'failed' ? ready.message : ready.kind}`, { type: 'distributed' });
    }
    this.rank = ready.rank;
    this.size = ready.size;
    this.implementation = ready.implementation;
    this.library = ready.library;
  }

  /** @internal Starts the MPI thread and initialises MPI, blocking until it is ready; use {@link mpiWorld}. */
  static start(): MpiCommunicator {
    return new MpiCommunicator();
  }

  /** Sums `values` over every process, element by element; returns the sums (in `values` itself when it is on a `SharedArrayBuffer`). */
  async allReduceSum(values: Float32Array): Promise<Float32Array> {
    const data = shared(values, (b) => new Float32Array(b));
    await this.call(this.allReduceRequest(data));
    return data;
  }

  /** {@link MpiCommunicator.allReduceSum}, blocking this thread until it is done. */
  allReduceSumSync(values: Float32Array): Float32Array {
    const data = shared(values, (b) => new Float32Array(b));
    this.callSync(this.allReduceRequest(data));
    return data;
  }

  /** Gives every process the bytes of process `root`; returns them (in `bytes` itself when it is on a `SharedArrayBuffer`). */
  async broadcast(bytes: Uint8Array, root = 0): Promise<Uint8Array> {
    const data = shared(bytes, (b) => new Uint8Array(b));
    await this.call(this.broadcastRequest(data, root));
    return data;
  }

  /** {@link MpiCommunicator.broadcast}, blocking this thread until it is done. */
  broadcastSync(bytes: Uint8Array, root = 0): Uint8Array {
    const data = shared(bytes, (b) => new Uint8Array(b));
    this.callSync(this.broadcastRequest(data, root));
    return data;
  }

  /** Resolves when every process has reached its barrier. */
  async barrier(): Promise<void> {
    await this.call({ kind: 'barrier' });
  }

  /** {@link MpiCommunicator.barrier}, blocking this thread until every process has reached it. */
  barrierSync(): void {
    this.callSync({ kind: 'barrier' });
  }

  /** Ends every process of the run with exit code `code` (`MPI_Abort`). */
  abort(code = 1): void {
    this.callSync({ kind: 'abort', code });
  }

  /** Finalizes MPI (done when the process exits); no collective can follow. */
  finalize(): void {
    if (this.finalized) return;
    this.callSync({ kind: 'finalize' });
    this.finalized = true;
  }

  private allReduceRequest(data: Float32Array): MpiRequest {
    return { kind: 'allReduceSum', data: data.buffer as SharedArrayBuffer, offset: data.byteOffset, length: data.length };
  }

  private broadcastRequest(data: Uint8Array, root: number): MpiRequest {
    if (!Number.isInteger(root) || root < 0 || root >= this.size) {
      throw new PoptfjsError(`broadcast: root must be a rank from 0 to ${this.size - 1}, got ${root}`, { type: 'distributed' });
    }
    return { kind: 'broadcast', data: data.buffer as SharedArrayBuffer, offset: data.byteOffset, length: data.length, root };
  }

  private post(request: MpiRequest): number {
    if (this.finalized) throw new PoptfjsError(`MPI ${request.kind}: MPI was finalized`, { type: 'distributed' });
    this.port.postMessage(request);
    return ++this.sent;
  }

  /** Reads the replies posted so far, in order. */
  private drain(): void {
    for (let r = receiveMessageOnPort(this.port); r; r = receiveMessageOnPort(this.port)) this.replies.set(++this.received, r.message as MpiReply);
  }

  /** Takes the reply to request `seq` if it has come. */
  private take(seq: number): MpiReply | undefined {
    this.drain();
    const reply = this.replies.get(seq);
    this.replies.delete(seq);
    return reply;
  }

  /** Blocks until the reply to request `seq` comes (or `timeoutMs` passes: an error naming `what`). */
  private replyOf(seq: number, timeoutMs: number, what: string): MpiReply {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const seen = Atomics.load(this.signal, REPLY_COUNTER);
      const reply = this.take(seq);
      if (reply) return reply;
      const left = deadline - performance.now();
      if (left <= 0) throw new PoptfjsError(`${what}: the MPI thread did not answer within ${timeoutMs / 1000} s`, { type: 'distributed' });
      Atomics.wait(this.signal, REPLY_COUNTER, seen, left);
    }
  }

  private callSync(request: MpiRequest): void {
    settle(request, this.replyOf(this.post(request), Number.POSITIVE_INFINITY, `MPI ${request.kind}`));
  }

  private async call(request: MpiRequest): Promise<void> {
    const seq = this.post(request);
    // The thread keeps the process alive while a promise waits on it.
    if (this.asyncWaiters++ === 0) this.thread.ref();
    try {
      for (;;) {
        const seen = Atomics.load(this.signal, REPLY_COUNTER);
        const reply = this.take(seq);
        if (reply) return settle(request, reply);
        const wait = waitAsync(this.signal, REPLY_COUNTER, seen);
        if (wait.async) await wait.value;
      }
    } finally {
      if (--this.asyncWaiters === 0) this.thread.unref();
    }
  }
}

/** Throws the error of a failed request. */
function settle(request: MpiRequest, reply: MpiReply): void {
  if (reply.kind === 'failed') throw new PoptfjsError(`MPI ${request.kind} failed: ${reply.message}`, { type: 'distributed' });
}

let world: MpiCommunicator | undefined;

/**
 * The communicator of this process (`MPI_COMM_WORLD`): MPI is loaded and
 * initialised on first use (blocking until it is ready; an error names what
 * to install when no MPI library is found) and finalized when the process
 * exits. Under `mpiexec` every process of the run must ask for it.
 */
export function mpiWorld(): MpiCommunicator {
  if (!world) {
    const started = MpiCommunicator.start();
    world = started;
    process.on('exit', () => {
      try {
        started.finalize();
      } catch (error) {
        log.debug(`finalizing MPI at exit: ${error instanceof Error ? error.message : String(error)}`);
      }
    });
    log.debug(`MPI: ${started.implementation} (${started.library}), rank ${started.rank} of ${started.size}`);
  }
  return world;
}
