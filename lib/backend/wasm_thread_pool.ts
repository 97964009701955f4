/**
 * Switching the threaded wasm build between its thread pool and the calling
 * thread, kernel by kernel.
 *
 * tfjs's wasm backend (4.22) keeps one XNNPACK thread pool in a C++ global,
 * `tfjs::backend::threadpool`, and every kernel reads it when it runs
 * (`xnn_setup_*` and `xnn_run_operator(op, threadpool)`); its operators do
 * not hold it. A null pool makes XNNPACK compute on the calling thread, with
 * no hand-over to the pool's threads (which costs about 0.1 ms per kernel on
 * an idle machine and far more on a busy one). The backend offers no call to
 * change the pool after it starts (`setThreadsCount` acts only before; a
 * second `init_with_threads_count` leaks a pool each time), so the global is
 * written directly: its address is read from the build's own
 * `get_threads_count`, whose body begins by loading it
 * (`i32.const <address>; i32.load`), and is accepted only once the backend
 * answers as expected to each value written there (its thread count, then
 * -1 for no pool, then its thread count again). Results do not depend on
 * the choice: XNNPACK splits a kernel's output among threads, never a sum.
 */
import { getLogger } from '../common/log.js';

const log = getLogger('poptfjs');

/** The parts of the threaded build's Emscripten module used here. */
export interface PoolModule {
  /** The module's memory as 32-bit words (replaced when the memory grows). */
  readonly HEAP32: Int32Array;
  readonly tfjs?: unknown;
}

/**
 * Reads a LEB128 number at `at` (signed for an `i32.const` operand); returns
 * it and the position after it.
 */
function leb(bytes: Uint8Array, at: number, signed: boolean): [number, number] {
  let value = 0;
  let shift = 0;
  for (;;) {
    const byte = bytes[at++];
    if (byte === undefined) throw new RangeError('truncated LEB128 number');
    value += (byte & 0x7f) * 2 ** shift;
    shift += 7;
    if ((byte & 0x80) === 0) return [signed && byte & 0x40 ? value - 2 ** shift : value, at];
  }
}

/** Reads an unsigned LEB128 number at `at`. */
function unsignedLeb(bytes: Uint8Array, at: number): [number, number] {
  return leb(bytes, at, false);
}

/** Reads a signed LEB128 number (an `i32.const` operand) at `at`. */
function signedLeb(bytes: Uint8Array, at: number): [number, number] {
  return leb(bytes, at, true);
}

/** Reads a name (length-prefixed UTF-8) at `at`. */
function name(bytes: Uint8Array, at: number): [string, number] {
  const [length, start] = unsignedLeb(bytes, at);
  return [new TextDecoder().decode(bytes.subarray(start, start + length)), start + length];
}

/** The sections of a wasm binary: [id, start of contents, end]. */
function sections(binary: Uint8Array): Array<[number, number, number]> {
  const found: Array<[number, number, number]> = [];
  for (let at = 8; at < binary.length; ) {
    const id = binary[at]!;
    const [size, start] = unsignedLeb(binary, at + 1);
    found.push([id, start, start + size]);
    at = start + size;
  }
  return found;
}

/** How many functions the binary imports (they come first in the function index space). */
function importedFunctions(binary: Uint8Array, start: number): number {
  let [count, at] = unsignedLeb(binary, start);
  let functions = 0;
  for (; count > 0; count--) {
    [, at] = name(binary, at);
    [, at] = name(binary, at);
    const kind = binary[at++];
    if (kind === 0) {
      functions++;
      [, at] = unsignedLeb(binary, at);
    } else if (kind === 1 || kind === 2) {
      if (kind === 1) at++; // the table's element type
      const flags = binary[at++]!;
      [, at] = unsignedLeb(binary, at);
      if (flags & 1) [, at] = unsignedLeb(binary, at);
    } else if (kind === 3) {
      at += 2; // value type, mutability
    } else {
      at++; // a tag's attribute
      [, at] = unsignedLeb(binary, at);
    }
  }
  return functions;
}

/** The index of the function the binary exports as `wanted`. */
function exportedFunction(binary: Uint8Array, start: number, wanted: string): number | undefined {
  let [count, at] = unsignedLeb(binary, start);
  for (; count > 0; count--) {
    let exported: string;
    [exported, at] = name(binary, at);
    const kind = binary[at++];
    let index: number;
    [index, at] = unsignedLeb(binary, at);
    if (kind === 0 && exported === wanted) return index;
  }
  return undefined;
}

/** The body of the `n`-th defined function, after its local declarations. */
function functionCode(binary: Uint8Array, start: number, n: number): number | undefined {
  let [count, at] = unsignedLeb(binary, start);
  if (n >= count) return undefined;
  for (let i = 0; i < n; i++) {
    const [size, body] = unsignedLeb(binary, at);
    at = body + size;
  }
  [, at] = unsignedLeb(binary, at); // the body's size
  let groups: number;
  [groups, at] = unsignedLeb(binary, at);
  for (; groups > 0; groups--) {
    [, at] = unsignedLeb(binary, at);
    at++; // the locals' type
  }
  return at;
}

const I32_CONST = 0x41;
const I32_LOAD = 0x28;

/**
 * The address of the thread-pool global in the wasm backend's binary: the
 * word `get_threads_count` loads first (`i32.const a; i32.load offset=o`
 * gives `a + o`), or undefined when the binary is not laid out that way.
 * @internal Exported for tests.
 */
export function threadPoolAddress(binary: Uint8Array): number | undefined {
  try {
    const all = sections(binary);
    const section = (id: number) => all.find(([s]) => s === id);
    const imports = section(2);
    const exports = section(7);
    const code = section(10);
    if (!exports || !code) return undefined;
    const index = exportedFunction(binary, exports[1], 'get_threads_count');
    const imported = imports ? importedFunctions(binary, imports[1]) : 0;
    if (index === undefined || index < imported) return undefined;
    const at = functionCode(binary, code[1], index - imported);
    if (at === undefined || binary[at] !== I32_CONST) return undefined;
    const [address, loadAt] = signedLeb(binary, at + 1);
    if (binary[loadAt] !== I32_LOAD) return undefined;
    const [, offsetAt] = unsignedLeb(binary, loadAt + 1); // alignment
    const [offset] = unsignedLeb(binary, offsetAt);
    const word = address + offset;
    return word > 0 && word % 4 === 0 ? word : undefined;
  } catch {
    return undefined;
  }
}

/** A thread pool that kernels can be switched onto and off. */
interface Switchable {
  readonly module: PoolModule;
  /** The word index of the pool global in `HEAP32`. */
  readonly word: number;
  /** The pool (a pointer into the module's memory). */
  readonly pool: number;
  readonly threads: number;
  /** The threads kernels compute on now: `threads`, or 1. */
  current: number;
  /** Whether XNNPACK's kernels use the pool now (else only poptfjs's own routines compute on more than one thread). */
  poolOn: boolean;
}

let switchable: Switchable | undefined;

/**
 * Makes the pool of a threaded build started on `threads` threads
 * switchable, if its binary is laid out as expected and the backend confirms
 * each value written (see the module's description); `threadsCount` is the
 * build's `get_threads_count`. Returns whether it is.
 */
export function enableThreadPoolSwitch(module: PoolModule, binary: Uint8Array, threads: number, threadsCount: () => number): boolean {
  const address = threadPoolAddress(binary);
  const failure = (() => {
    if (address === undefined) return `get_threads_count does not begin by loading a global`;
    const word = address / 4;
    const pool = module.HEAP32[word]!;
    if (pool === 0 || threadsCount() !== threads) return `the word it loads does not hold the pool of ${threads} threads`;
    module.HEAP32[word] = 0;
    const none = threadsCount();
    module.HEAP32[word] = pool;
    if (none !== -1 || threadsCount() !== threads) return `the backend did not see the pool switched off and on`;
    switchable = { module, word, pool, threads, current: threads, poolOn: true };
    return undefined;
  })();
  if (failure) log.warn(`the wasm backend computes every kernel on its ${threads} threads: its thread pool cannot be switched (${failure})`);
  return failure === undefined;
}

/**
 * The threads kernels can be switched among: the pool's size when kernels
 * can be moved between the pool and the calling thread, else undefined
 * (another backend, one thread, or a pool fixed with `POPTFJS_WASM_THREADS`).
 */
export function switchableWasmThreads(): number | undefined {
  return switchable?.threads;
}

/**
 * Makes the wasm backend's kernels compute on `threads`: 1, on the calling
 * thread alone, or more, on the whole pool. With `routinesOnly`, only
 * poptfjs's own WebAssembly SIMD routines compute on more than one thread
 * (with their helper thread, simd_routine_threads.ts) and XNNPACK's kernels
 * on the calling thread: the pool's threads spin-wait for work after each
 * kernel, holding a core that the routines' helper then waits for, so a
 * graph whose large kernels are routines keeps the pool off. Does nothing
 * when the pool cannot be switched.
 */
export function computeOnWasmThreads(threads: number, routinesOnly = false): void {
  const s = switchable;
  if (!s) return;
  const wanted = threads > 1 ? s.threads : 1;
  const poolOn = wanted > 1 && !routinesOnly;
  if (wanted === s.current && poolOn === s.poolOn) return;
  s.module.HEAP32[s.word] = poolOn ? s.pool : 0;
  s.current = wanted;
  s.poolOn = poolOn;
}

/** Whether XNNPACK's kernels leave the cores to poptfjs's routines now: more than one thread, the pool off. */
export function routinesOnlyOnWasmThreads(): boolean {
  return switchable !== undefined && switchable.current > 1 && !switchable.poolOn;
}

/** The threads the wasm backend's kernels compute on now (1 when its pool is switched off). */
export function wasmComputeThreads(): number | undefined {
  return switchable?.current;
}

/**
 * Runs `fn` with the wasm backend's kernels on `threads` (see
 * {@link computeOnWasmThreads}), then puts back the threads they computed on
 * before.
 */
export function withWasmThreads<T>(threads: number, fn: () => T): T {
  const before = wasmComputeThreads();
  if (before === undefined) return fn();
  computeOnWasmThreads(threads);
  try {
    return fn();
  } finally {
    computeOnWasmThreads(before);
  }
}
