/**
 * The wasm backend on several threads in Node.
 *
 * tfjs's wasm package ships a build with threads (XNNPACK's thread pool on
 * Emscripten pthreads) but starts it only in browsers: in Node it would hand
 * `worker_threads` the worker script as a `blob:` URL, which Node refuses,
 * and it sizes the thread pool at half the logical cores (one thread on a
 * 2-core machine). Here that build is started directly: its worker script is
 * written to a private temporary directory (removed once the workers have
 * loaded it), the module is told a core count that gives the pool the
 * threads asked for, and the backend is registered as 'wasm', so the wasm
 * kernels (tfjs's and poptfjs's) run on it unchanged. Results do not depend
 * on the thread count: XNNPACK splits an operator's output among the
 * threads, never a sum.
 *
 * Threads: `POPTFJS_WASM_THREADS` if set, else the cores the process may
 * use (a cgroup CPU quota counts) on the main thread and one in a worker
 * thread (a worker IPU is already one of several threads), at most 8 (the
 * pool the build preloads). With one thread, or when the threaded build
 * cannot start (no shared memory, no wasm threads), tfjs's own one-thread
 * wasm backend is used; the reason is logged. When the count is not forced,
 * kernels can be moved between the pool and the calling thread
 * (wasm_thread_pool.ts), so each executable computes its small kernels on
 * one thread and its large ones on all.
 */
import * as tf from '@tensorflow/tfjs';
import { BackendWasm, getThreadsCount, setThreadsCount } from '@tensorflow/tfjs-backend-wasm';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { isMainThread, type Worker } from 'node:worker_threads';
import { PoptfjsError } from '../common/errors.js';
import { getLogger } from '../common/log.js';
import { engine } from './tfjs_internals.js';
import { enableThreadPoolSwitch } from './wasm_thread_pool.js';

const log = getLogger('poptfjs');
const require = createRequire(import.meta.url);

/** The most threads the threaded build runs (the workers it preloads). */
export const MAX_WASM_THREADS = 8;

/** The threaded build's files, in the wasm package. */
const BUILD = 'tfjs-backend-wasm-threaded-simd';

/** Reads a text file, or undefined if it cannot be read. */
function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * The CPUs a cgroup CPU quota lets this process use, rounded up (a
 * container started with `--cpus=2` on a larger machine: 2), or undefined
 * when there is no quota. Reads cgroup v2's `cpu.max` (`<quota> <period>` or
 * `max <period>`), else cgroup v1's `cpu.cfs_quota_us` (-1 for none) and
 * `cpu.cfs_period_us`, through `read` (a path to its text, or undefined).
 * @internal Exported for tests.
 */
export function cgroupCpuLimit(read: (path: string) => string | undefined = readText): number | undefined {
  const limit = (quota: number, period: number) => (quota > 0 && period > 0 ? Math.max(1, Math.ceil(quota / period)) : undefined);
  const v2 = read('/sys/fs/cgroup/cpu.max')?.trim().split(/\s+/);
  if (v2) return v2[0] === 'max' ? undefined : limit(Number(v2[0]), Number(v2[1]));
  const quota = read('/sys/fs/cgroup/cpu/cpu.cfs_quota_us');
  const period = read('/sys/fs/cgroup/cpu/cpu.cfs_period_us');
  return quota === undefined || period === undefined ? undefined : limit(Number(quota), Number(period));
}

/**
 * The threads the wasm backend is to compute with: `POPTFJS_WASM_THREADS`
 * if set (an integer from 1 to {@link MAX_WASM_THREADS}; `forced`), else, on
 * the main thread, the cores this process may use (the machine's, or fewer
 * under a cgroup CPU quota; at most {@link MAX_WASM_THREADS}), and 1 in a
 * worker thread.
 */
function requestedWasmThreads(): { threads: number; forced: boolean } {
  const setting = process.env.POPTFJS_WASM_THREADS;
  if (setting === undefined || setting === '') {
    return { threads: isMainThread ? Math.min(availableParallelism(), cgroupCpuLimit() ?? Infinity, MAX_WASM_THREADS) : 1, forced: false };
  }
  const threads = Number(setting);
  if (!Number.isInteger(threads) || threads < 1 || threads > MAX_WASM_THREADS) {
    throw new PoptfjsError(`POPTFJS_WASM_THREADS is '${setting}'; expected an integer from 1 to ${MAX_WASM_THREADS}`, { type: 'backend' });
  }
  return { threads, forced: true };
}

/** The parts of the Emscripten module of the threaded build used here. */
interface ThreadedModule {
  readonly HEAP32: Int32Array;
  cwrap(name: string, returnType: string | null, argTypes: string[]): (...args: number[]) => number;
  PThread: { unusedWorkers: Worker[]; runningWorkers: Worker[] };
  tfjs?: unknown;
}

type ModuleFactory = (config: object) => Promise<ThreadedModule>;

/** The threads of the module's pthread pool, busy or idle. */
function poolWorkers(module: ThreadedModule): Worker[] {
  return [...module.PThread.runningWorkers, ...module.PThread.unusedWorkers];
}

/** An instantiated WebAssembly module (the WebAssembly API is not in this project's type libraries). */
interface Instantiated {
  instance: unknown;
  module: unknown;
}

const webAssembly = (globalThis as unknown as { WebAssembly: { instantiate(binary: Uint8Array, imports: object): Promise<Instantiated> } }).WebAssembly;

/** What the Emscripten glue passes to `instantiateWasm`: the imports of the module. */
interface WasmImports {
  env: Record<string, unknown>;
  wasi_snapshot_preview1: Record<string, unknown>;
}

/**
 * Starts the threaded build on `threads` threads and returns it as a tfjs
 * wasm backend, its pool switchable between kernels if `switchable`. Throws
 * if the build cannot start or its pool has fewer threads.
 */
async function threadedBackend(threads: number, switchable: boolean): Promise<BackendWasm> {
  const folder = join(dirname(require.resolve('@tensorflow/tfjs-backend-wasm/package.json')), 'wasm-out');
  const script = join(folder, `${BUILD}.js`);
  const binary = readFileSync(join(folder, `${BUILD}.wasm`));
  const directory = mkdtempSync(join(tmpdir(), 'poptfjs-wasm-'));
  let module: ThreadedModule | undefined;
  try {
    // The worker script is shipped as a string; its `\n` escapes were unescaped by the template literal that holds it.
    const workerScript = join(directory, `${BUILD}.worker.cjs`);
    writeFileSync(workerScript, (require(join(folder, `${BUILD}.worker.js`)) as { wasmWorkerContents: string }).wasmWorkerContents.replace(/\n/g, '\\n'));
    const factory = require(script) as ModuleFactory;
    module = await factory({
      // Workers load the module's script from its path (the default is a `blob:` URL).
      mainScriptUrlOrBlob: script,
      locateFile: (path: string) => (path.endsWith('.worker.js') ? workerScript : join(folder, path)),
      // The backend sizes its pool at half the logical cores it is told of.
      instantiateWasm(imports: WasmImports, receive: (instance: unknown, module: unknown) => void) {
        const env = { ...imports.env, emscripten_num_logical_cores: () => 2 * threads };
        void webAssembly.instantiate(binary, { env, wasi_snapshot_preview1: env }).then(({ instance, module: compiled }) => receive(instance, compiled));
        return {};
      },
    });
    const threadsCount = module.cwrap('get_threads_count', 'number', []);
    module.tfjs = {
      init: module.cwrap('init', null, []),
      initWithThreadsCount: module.cwrap('init_with_threads_count', null, ['number']),
      getThreadsCount: threadsCount,
      registerTensor: module.cwrap('register_tensor', null, ['number', 'number', 'number']),
      disposeData: module.cwrap('dispose_data', null, ['number']),
      dispose: module.cwrap('dispose', null, []),
    };
    setThreadsCount(threads);
    const backend = new BackendWasm(module as never);
    // The pool's threads wait for work; they must not keep the process alive.
    for (const worker of poolWorkers(module)) worker.unref();
    const running = getThreadsCount();
    if (running !== threads) throw new Error(`its thread pool has ${running} thread(s), not ${threads}`);
    if (switchable) enableThreadPoolSwitch(module, binary, threads, threadsCount);
    return backend;
  } catch (error) {
    for (const worker of module ? poolWorkers(module) : []) void worker.terminate();
    throw error;
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

let registered = false;

/**
 * Makes the 'wasm' backend start on the threads asked for (see
 * the module's description), falling back to tfjs's own wasm backend.
 * Does nothing once the wasm backend is initialised, or when called again.
 */
export function registerThreadedWasmBackend(): void {
  const single = tf.findBackendFactory('wasm');
  // A wasm backend already initialised (by the program itself) is kept.
  if (!single || registered || 'wasm' in engine().registry) return;
  const { threads, forced } = requestedWasmThreads();
  registered = true;
  if (threads === 1 || typeof SharedArrayBuffer === 'undefined') return;
  tf.removeBackend('wasm');
  tf.registerBackend(
    'wasm',
    async () => {
      try {
        const backend = await threadedBackend(threads, !forced);
        log.info(`the wasm backend computes on ${threads} threads${forced ? '' : ', small kernels on one'}`);
        return backend;
      } catch (error) {
        log.warn(`the wasm backend runs on one thread: its threaded build did not start (${error instanceof Error ? error.message : String(error)})`);
        return single();
      }
    },
    2,
  );
}

/**
 * The threads the wasm backend computes with once initialised (1 before, and
 * when another backend is in use).
 */
export function wasmThreads(): number {
  return tf.getBackend() === 'wasm' ? Math.max(1, getThreadsCount()) : 1;
}
