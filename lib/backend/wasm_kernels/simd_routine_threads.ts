/**
 * poptfjs's WebAssembly SIMD routines on two threads of the threaded wasm
 * build: the calling thread and one helper thread working on the same
 * shared memory.
 *
 * XNNPACK spreads its kernels over the backend's thread pool, but poptfjs's
 * own routines (wasm_simd_routine.ts) are called from JavaScript and ran on
 * the calling thread alone: a pass over a few megabytes (a small CNN's bias
 * add and relu, its relu gradient, its max-pool gradient) is bound by what
 * one core moves, about 25 GB/s. In the threaded build the backend's memory
 * is a shared `WebAssembly.Memory`, so a `worker_threads` worker can
 * instantiate the same routines on it. A call is cut along its first axis
 * into chunks (rows, images, groups of elements), which both threads claim
 * one at a time through a shared counter of claimed chunks: whichever thread
 * is free takes one more, the calling thread from the first chunk on, the
 * helper from the last one back. So calls in a row over the same rows (a
 * convolution, then a depthwise convolution of its output) find each
 * thread's part in its own core's cache: MobileNetV2's 56 × 56 × 144
 * depthwise convolution takes 0.29 ms after the 1 × 1 convolution that
 * makes its input, where it took 0.43 with both threads claiming the next
 * chunk in order. When the helper does not get a core in time (other processes hold
 * it, or it is still waking up) the calling thread takes every chunk itself,
 * so a call never waits for a helper that has not started; it only waits for
 * a chunk the helper is computing. Each chunk computes what the one-thread
 * call computes for its part, so the results are the same bit for bit.
 *
 * The helper starts on the first split call for a memory, and does not keep
 * the process alive. A call splits only where the memory is shared and the
 * kernels compute on more than one thread now (the wasm backend has a pool
 * and the thread choice of wasm_thread_choice.ts gives the kernel the pool);
 * otherwise, or once the helper has failed, it runs on the calling thread.
 * A helper that stops while it holds a chunk makes the call throw within
 * {@link HELPER_TIMEOUT_MS}, and a chunk that fails on the helper makes it
 * throw with the helper's error; later calls run on the calling thread.
 *
 * Between calls the helper sleeps, except while the routines carry the
 * second core for a whole graph (XNNPACK's pool left off,
 * wasm_thread_pool.ts): then it spin-waits about 50 µs for the next call
 * first, as XNNPACK's own pool threads do.
 */
import { type MessagePort, MessageChannel, receiveMessageOnPort, Worker } from 'node:worker_threads';
import { PoptfjsError } from '../../common/errors.js';
import { getLogger } from '../../common/log.js';
import { routinesOnlyOnWasmThreads, wasmComputeThreads } from '../wasm_thread_pool.js';
import { wasmThreads } from '../wasm_threads.js';
import { compiledRoutine, type RoutineCode, simdRoutine, type WasmMemory } from './wasm_simd_routine.js';

const log = getLogger('poptfjs');

/** A routine call cut along its first axis into chunks. */
export interface SplitCall {
  /** The routine's arguments for the whole call. */
  readonly args: readonly number[];
  /** What each argument advances by per unit of the first axis (bytes for addresses, 0 for the others). */
  readonly steps: readonly number[];
  /** The argument that holds the count of units (each chunk gets its own count there). */
  readonly countArg: number;
  /** Units along the first axis (rows, images, elements). */
  readonly units: number;
  /** Bytes a unit reads and writes (sets the chunk size). */
  readonly unitBytes: number;
  /** Chunks start at multiples of this many units (default 1; 4 keeps elements in whole SIMD groups). */
  readonly granule?: number;
}

/** How long a call waits for the helper's chunk before it reports the helper stopped. */
export const HELPER_TIMEOUT_MS = 3000;

/**
 * Iterations (about 50 µs) the helper spin-waits for the next call when
 * poptfjs's routines carry the second core (XNNPACK's pool off,
 * wasm_thread_pool.ts): a graph's kernels follow each other within
 * microseconds, and waking a sleeping thread costs tens of microseconds, so
 * the calling thread would start each call alone. Measured on SqueezeNet's
 * session on 2 cores: 10.8 ms a run without spinning, 10.1 with 20 000
 * iterations, 10.0 with 100 000.
 */
const SPIN_ITERATIONS = 50_000;

/** Bytes a chunk moves at least (about 10 µs of work): smaller calls run on the calling thread. */
const CHUNK_BYTES = 256 * 1024;

/** The most chunks a call is cut into. */
const MAX_CHUNKS = 64;

/** The most arguments of a routine. */
const MAX_ARGS = 32;

// Words of the control block shared with the helper.
const SEQUENCE = 0;
const CLAIM = 1;
const DONE = 2;
const FAILED = 3;
const ROUTINE = 4;
const ARG_COUNT = 5;
const COUNT_ARG = 6;
const UNITS = 7;
const CHUNK_UNITS = 8;
const CHUNKS = 9;
/** Nonzero: the helper exits when it has claimed its next chunk (tests: a helper that dies while it holds a chunk). */
const EXIT_ON_CHUNK = 10;
/** Iterations the helper spin-waits for the next call after one, before it sleeps. */
const SPIN = 11;
/** Nonzero: the helper's next chunk fails, once (tests: a chunk that fails on the helper alone). */
const FAIL_ON_CHUNK = 12;
const ARGS = 13;
const STEPS = ARGS + MAX_ARGS;
const CONTROL_WORDS = STEPS + MAX_ARGS;

/** Bits of the claim word for the next chunk; the bits above hold the call's sequence number. */
const CHUNK_BITS = 10;

/**
 * The chunk field of a closed claim word: beyond every call's chunks. A call closes the claim under its own tag
 * before it writes its control words, so that a helper still reading those of an earlier call (it woke late, after
 * the calling thread had done every chunk itself) finds a tag not its own and claims nothing, instead of a chunk of
 * the earlier call with arguments of the new one.
 */
const CLOSED = (1 << CHUNK_BITS) - 1;

/**
 * The helper's program (a CommonJS script). It waits for a new sequence
 * number (spinning first for the iterations the last call asked), then
 * claims chunks like the calling thread and computes them from the last one
 * back until none is left,
 * counting each done chunk; a failure is recorded, and its error posted on
 * the port, for the caller to throw. A routine arrives on the port, as a
 * compiled module, before its first call.
 */
const HELPER_SOURCE = `
const { workerData, receiveMessageOnPort } = require('node:worker_threads');
const { memory, control, port } = workerData;
const c = new Int32Array(control);
const routines = [];
const install = () => {
  for (let m = receiveMessageOnPort(port); m !== undefined; m = receiveMessageOnPort(port)) {
    const { index, module, name } = m.message;
    routines[index] = new WebAssembly.Instance(module, { env: { memory } }).exports[name];
  }
};
const args = [];
let seen = 0;
for (;;) {
  for (let i = c[${SPIN}]; i > 0 && Atomics.load(c, ${SEQUENCE}) === seen; i--);
  Atomics.wait(c, ${SEQUENCE}, seen);
  const sequence = Atomics.load(c, ${SEQUENCE});
  seen = sequence;
  const index = Atomics.load(c, ${ROUTINE});
  if (routines[index] === undefined) install();
  const routine = routines[index];
  if (routine === undefined) continue;
  const count = Atomics.load(c, ${ARG_COUNT}), countArg = Atomics.load(c, ${COUNT_ARG}), units = Atomics.load(c, ${UNITS});
  const chunkUnits = Atomics.load(c, ${CHUNK_UNITS}), chunks = Atomics.load(c, ${CHUNKS});
  const tag = (sequence << ${CHUNK_BITS}) >>> ${CHUNK_BITS};
  for (let taken = 0; ; taken++) {
    let claim;
    for (;;) {
      claim = Atomics.load(c, ${CLAIM});
      if (claim >>> ${CHUNK_BITS} !== tag || (claim & ${(1 << CHUNK_BITS) - 1}) >= chunks) break;
      if (Atomics.compareExchange(c, ${CLAIM}, claim, claim + 1) === claim) break;
    }
    if (claim >>> ${CHUNK_BITS} !== tag || (claim & ${(1 << CHUNK_BITS) - 1}) >= chunks) break;
    if (c[${EXIT_ON_CHUNK}] !== 0) process.exit(1);
    const start = (chunks - 1 - taken) * chunkUnits;
    args.length = count;
    for (let i = 0; i < count; i++) args[i] = Atomics.load(c, ${ARGS} + i) + Atomics.load(c, ${STEPS} + i) * start;
    args[countArg] = Math.min(chunkUnits, units - start);
    try {
      if (c[${FAIL_ON_CHUNK}] !== 0 && Atomics.exchange(c, ${FAIL_ON_CHUNK}, 0) !== 0) throw new Error('a failure asked for by failSimdRoutineHelperOnNextChunk');
      routine(...args);
    } catch (error) {
      port.postMessage({ failure: String(error) });
      Atomics.store(c, ${FAILED}, 1);
    }
    Atomics.add(c, ${DONE}, 1);
    Atomics.notify(c, ${DONE});
  }
}
`;

/** The helper thread of one memory. */
class HelperThread {
  private readonly control = new Int32Array(new SharedArrayBuffer(4 * CONTROL_WORDS));
  private readonly worker: Worker;
  private readonly port: MessagePort;
  private readonly installed = new Map<RoutineCode, number>();
  private readonly args: number[] = [];
  private sequence = 0;
  /** Why the helper cannot be used any more, once it failed. */
  failure: string | undefined;
  /** The chunks the helper has computed. */
  helperChunks = 0;

  constructor(private readonly memory: WasmMemory) {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.worker = new Worker(HELPER_SOURCE, { eval: true, workerData: { memory, control: this.control.buffer, port: port2 }, transferList: [port2] });
    this.worker.unref();
    this.port.unref();
    this.worker.on('error', (error) => this.fail(`it failed: ${error.message}`));
    this.worker.on('exit', (code) => this.fail(`it exited with code ${code}`));
  }

  private fail(why: string): void {
    if (this.failure !== undefined) return;
    this.failure = why;
    log.warn(`poptfjs's WebAssembly SIMD routines compute on the calling thread only from now on: their helper thread stopped (${why})`);
  }

  /** The index of `code` in the helper, sending it there on its first call. */
  private routineIndex(code: RoutineCode): number | undefined {
    let index = this.installed.get(code);
    if (index !== undefined) return index;
    const module = compiledRoutine(this.memory, code);
    if (module === undefined) return undefined;
    index = this.installed.size;
    this.port.postMessage({ index, module, name: code.name });
    this.installed.set(code, index);
    return index;
  }

  /**
   * Runs `call` of `routine` (`code` on this thread) in `chunks` chunks of
   * `chunkUnits` units on both threads; false where `code` cannot be sent.
   */
  run(code: RoutineCode, routine: (...args: number[]) => void, call: SplitCall, chunkUnits: number, chunks: number): boolean {
    const index = this.routineIndex(code);
    if (index === undefined) return false;
    const c = this.control;
    const count = call.args.length;
    this.sequence = (this.sequence + 1) | 0;
    const tag = (this.sequence << CHUNK_BITS) >>> CHUNK_BITS;
    Atomics.store(c, CLAIM, (tag << CHUNK_BITS) | CLOSED);
    c[ROUTINE] = index;
    c[ARG_COUNT] = count;
    c[COUNT_ARG] = call.countArg;
    c[UNITS] = call.units;
    c[CHUNK_UNITS] = chunkUnits;
    c[CHUNKS] = chunks;
    for (let i = 0; i < count; i++) {
      c[ARGS + i] = call.args[i]!;
      c[STEPS + i] = call.steps[i]!;
    }
    c[DONE] = 0;
    c[FAILED] = 0;
    c[SPIN] = routinesOnlyOnWasmThreads() ? SPIN_ITERATIONS : 0;
    Atomics.store(c, CLAIM, tag << CHUNK_BITS);
    Atomics.store(c, SEQUENCE, this.sequence);
    Atomics.notify(c, SEQUENCE);
    const args = this.args;
    args.length = count;
    let mine = 0;
    for (;;) {
      const claim = Atomics.add(c, CLAIM, 1);
      if ((claim & ((1 << CHUNK_BITS) - 1)) >= chunks) break;
      const start = mine * chunkUnits;
      for (let i = 0; i < count; i++) args[i] = call.args[i]! + call.steps[i]! * start;
      args[call.countArg] = Math.min(chunkUnits, call.units - start);
      routine(...args);
      mine++;
    }
    // The claim counter ran past the last chunk; the helper reads it as nothing left.
    const theirs = chunks - mine;
    this.helperChunks += theirs;
    this.waitForDone(theirs, code);
    if (theirs > 0 && Atomics.load(c, FAILED) !== 0) {
      const why = this.helperFailure();
      this.fail(`a chunk of ${code.name} failed: ${why}`);
      throw new PoptfjsError(`the helper thread of poptfjs's WebAssembly SIMD routines failed in ${code.name}: ${why}; later calls compute on the calling thread`, {
        type: 'runtime',
      });
    }
    return true;
  }

  /** Waits until the helper has done the `theirs` chunks it claimed. */
  private waitForDone(theirs: number, code: RoutineCode): void {
    const c = this.control;
    if (theirs === 0) return;
    for (let spin = 0; spin < 200_000; spin++) if (Atomics.load(c, DONE) >= theirs) return;
    const deadline = performance.now() + HELPER_TIMEOUT_MS;
    for (;;) {
      const done = Atomics.load(c, DONE);
      if (done >= theirs) return;
      const left = deadline - performance.now();
      if (left <= 0) {
        this.fail(`it did not finish a chunk of ${code.name} within ${HELPER_TIMEOUT_MS} ms`);
        void this.worker.terminate();
        throw new PoptfjsError(`the helper thread of poptfjs's WebAssembly SIMD routines stopped: it did not finish its part of ${code.name} within ${HELPER_TIMEOUT_MS} ms`, {
          type: 'runtime',
        });
      }
      Atomics.wait(c, DONE, done, left);
    }
  }

  /** What the helper reported of its failed chunk. */
  private helperFailure(): string {
    for (let m = receiveMessageOnPort(this.port); m !== undefined; m = receiveMessageOnPort(this.port)) {
      const failure = (m.message as { failure?: unknown }).failure;
      if (typeof failure === 'string') return failure;
    }
    return 'no reason given';
  }

  /** Makes the helper's next chunk fail. */
  failOnNextChunk(): void {
    Atomics.store(this.control, FAIL_ON_CHUNK, 1);
  }

  /** Makes the helper exit once it claims its next chunk. */
  exitOnNextChunk(): void {
    Atomics.store(this.control, EXIT_ON_CHUNK, 1);
  }
}

const helpers = new WeakMap<WasmMemory, HelperThread | undefined>();

/** The helper thread of `memory`, started on the first call; undefined where the memory is not shared or the helper cannot start. */
function helperOf(memory: WasmMemory): HelperThread | undefined {
  if (helpers.has(memory)) return helpers.get(memory);
  let helper: HelperThread | undefined;
  if (typeof SharedArrayBuffer !== 'undefined' && memory.buffer instanceof SharedArrayBuffer) {
    try {
      helper = new HelperThread(memory);
    } catch (error) {
      log.warn(`poptfjs's WebAssembly SIMD routines compute on the calling thread only: their helper thread could not start (${(error as Error).message})`);
    }
  }
  helpers.set(memory, helper);
  return helper;
}

/**
 * Runs `code` on `memory` over `call`, on the calling thread and the helper
 * thread when both may compute (see the module's description), else on the
 * calling thread; returns false without running where the routine cannot
 * run (no memory, no WebAssembly SIMD).
 */
export function runSimdRoutine(memory: WasmMemory | undefined, code: RoutineCode, call: SplitCall): boolean {
  const routine = simdRoutine(memory, code);
  if (routine === undefined) return false;
  const chunks = chunkCount(call);
  const helper = chunks > 1 && (wasmComputeThreads() ?? wasmThreads()) > 1 ? helperOf(memory!) : undefined;
  if (helper === undefined || helper.failure !== undefined) {
    routine(...call.args);
    return true;
  }
  const granule = call.granule ?? 1;
  const chunkUnits = Math.ceil(call.units / chunks / granule) * granule;
  if (!helper.run(code, routine, call, chunkUnits, Math.ceil(call.units / chunkUnits))) routine(...call.args);
  return true;
}

/** How many chunks `call` is cut into: one per {@link CHUNK_BYTES}, at most {@link MAX_CHUNKS}, of whole granules. */
function chunkCount(call: SplitCall): number {
  if (call.args.length > MAX_ARGS) return 1;
  const bytes = call.units * call.unitBytes;
  return Math.max(1, Math.min(MAX_CHUNKS, Math.floor(bytes / CHUNK_BYTES), Math.floor(call.units / (call.granule ?? 1))));
}

/** @internal The chunks the helper thread of `memory` has computed (0 where it has none); for tests. */
export function simdRoutineHelperChunks(memory: WasmMemory): number {
  return helpers.get(memory)?.helperChunks ?? 0;
}

/** @internal Makes the next chunk the helper thread of `memory` (if it has one) computes fail; for tests of a chunk that fails on the helper. */
export function failSimdRoutineHelperOnNextChunk(memory: WasmMemory): boolean {
  const helper = helpers.get(memory);
  helper?.failOnNextChunk();
  return helper !== undefined;
}

/** @internal Makes the helper thread of `memory`, if it has one, exit once it claims its next chunk; for tests of a helper that dies. */
export function exitSimdRoutineHelperOnNextChunk(memory: WasmMemory): boolean {
  const helper = helpers.get(memory);
  helper?.exitOnNextChunk();
  return helper !== undefined;
}
