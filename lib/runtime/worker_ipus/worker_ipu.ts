/**
 * The main thread's handle on one worker IPU: the thread (never keeping the
 * process alive), its end of the message channel, its state word, and a
 * mirror of the weight copies it holds, so only changed weights are sent.
 */
import { MessageChannel, Worker, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { getLogger } from '../../common/log.js';
import { WeightCopies } from './weight_copies.js';
import { WORKER_STATE, type MainMessage, type WorkerReply, type WorkerSetup } from './worker_messages.js';
import type { WorkerScript } from './worker_script.js';

const log = getLogger('devicex');

/** One simulated IPU running in its own thread. */
export class WorkerIpu {
  private readonly thread: Worker;
  private readonly port: MessagePort;
  private readonly signal: Int32Array;
  private readonly slot: number;
  private stopped = false;
  /** The weight copies the worker holds (keys only). */
  readonly held = new WeightCopies<true>();

  /**
   * Starts the thread; it reports `ready` (or `failed`) on its channel.
   * @param ipu the IPU (within a replica) it simulates
   * @param script the program it runs
   * @param setup the worker's setup without its port
   * @param wasmThreads the threads of its wasm backend (`POPTFJS_WASM_THREADS` in its environment)
   */
  constructor(
    readonly ipu: number,
    script: WorkerScript,
    setup: Omit<WorkerSetup, 'port'>,
    wasmThreads: number,
  ) {
    const channel = new MessageChannel();
    this.port = channel.port1;
    this.port.unref();
    this.signal = new Int32Array(setup.signal);
    this.slot = setup.slot;
    const workerData: WorkerSetup = { ...setup, port: channel.port2 };
    const env = { ...process.env, POPTFJS_WASM_THREADS: String(wasmThreads) };
    this.thread = new Worker(script.filename, { eval: script.eval, workerData, transferList: [channel.port2], env });
    this.thread.unref();
    // A thread that fails reports it through its channel and its state word; the event itself must not become uncaught here.
    this.thread.on('error', (error) => log.debug(`the worker thread of IPU ${ipu} failed: ${error instanceof Error ? error.message : String(error)}`));
  }

  /** The worker's state word (see `WorkerState`). */
  get state(): number {
    return Atomics.load(this.signal, WORKER_STATE + this.slot);
  }

  /** Posts a message, handing over the buffers in `transfer`. */
  post(message: MainMessage, transfer: ArrayBuffer[] = []): void {
    this.port.postMessage(message, transfer);
  }

  /** The next reply the worker posted, if any (does not block). */
  poll(): WorkerReply | undefined {
    const received = receiveMessageOnPort(this.port);
    return received ? (received.message as WorkerReply) : undefined;
  }

  /** Ends the thread (idempotent). */
  terminate(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.port.close();
    void this.thread.terminate().catch(() => {});
  }
}
