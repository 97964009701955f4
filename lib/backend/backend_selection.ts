/**
 * Choosing the tfjs backend the simulated IPUs compute on.
 *
 * In order of preference: `tensorflow` (the optional peer
 * `@tensorflow/tfjs-node`, used when it is installed and loads), `wasm`
 * (SIMD, fast on plain matmuls), then `cpu`. The choice can be forced with
 * `POPTFJS_BACKEND` or `Options.backend(name)`; the backend chosen is logged
 * at INFO level.
 */
import * as tf from '@tensorflow/tfjs';
import '@tensorflow/tfjs-backend-wasm';
import { PoptfjsError } from '../common/errors.js';
import { getLogger } from '../common/log.js';
import { registerCpuFallbacks } from './cpu_fallback.js';
import { registerPoptfjsKernels } from './kernel_catalogue/kernel_catalogue.js';
import { registerWasmTrainingKernels } from './wasm_kernels/index.js';
import { registerThreadedWasmBackend } from './wasm_threads.js';

/** The backends poptfjs can run on. */
export const BACKEND_NAMES = ['tensorflow', 'wasm', 'cpu'] as const;
/** A backend poptfjs can run on. */
export type BackendName = (typeof BACKEND_NAMES)[number];

const log = getLogger('poptfjs');
registerWasmTrainingKernels();
registerPoptfjsKernels(BACKEND_NAMES);
const TFJS_NODE = '@tensorflow/tfjs-node';

function parseBackendName(name: string, source: string): BackendName {
  if ((BACKEND_NAMES as readonly string[]).includes(name)) return name as BackendName;
  throw new PoptfjsError(`${source}: unknown backend '${name}'; expected one of ${BACKEND_NAMES.join(', ')}`, { type: 'backend' });
}

type ProcessEvent = 'uncaughtException' | 'unhandledRejection';
const PROCESS_EVENTS: ProcessEvent[] = ['uncaughtException', 'unhandledRejection'];
type Listener = (...args: unknown[]) => void;

function listenersOf(event: ProcessEvent): Listener[] {
  return (process.listeners as (e: string) => Listener[])(event);
}

/**
 * Runs `fn` and removes the process-wide error handlers it installs: the wasm
 * backend's Emscripten glue adds handlers that rethrow and print the whole
 * glue source on any uncaught error in the program.
 */
async function withoutNewProcessHandlers<T>(fn: () => Promise<T>): Promise<T> {
  const before = new Map(PROCESS_EVENTS.map((e) => [e, new Set(listenersOf(e))]));
  try {
    return await fn();
  } finally {
    for (const event of PROCESS_EVENTS) {
      for (const listener of listenersOf(event)) {
        if (!before.get(event)!.has(listener)) process.removeListener(event, listener);
      }
    }
  }
}

async function tryBackend(name: BackendName): Promise<string | undefined> {
  if (name === 'wasm') registerThreadedWasmBackend(); // throws on a bad POPTFJS_WASM_THREADS
  try {
    if (name === 'tensorflow') await import(TFJS_NODE);
    const ok = await withoutNewProcessHandlers(async () => (await tf.setBackend(name)) && (await tf.ready(), true));
    return ok ? undefined : `tf.setBackend('${name}') failed`;
  } catch (error) {
    return error instanceof Error ? error.message.split('\n')[0] : String(error);
  }
}

let chosen: Promise<BackendName> | undefined;

async function choose(forced: BackendName | undefined): Promise<BackendName> {
  const candidates = forced ? [forced] : BACKEND_NAMES;
  const failures: string[] = [];
  for (const name of candidates) {
    const failure = await tryBackend(name);
    if (failure === undefined) {
      const fallbacks = registerCpuFallbacks();
      log.info(`using the tfjs '${name}' backend${failures.length ? ` (${failures.join('; ')})` : ''}`);
      if (fallbacks.length > 0) log.debug(`kernels run on the cpu backend when used: ${fallbacks.join(', ')}`);
      return name;
    }
    failures.push(`${name}: ${failure}`);
    log.debug(`backend '${name}' is not available: ${failure}`);
  }
  throw new PoptfjsError(`no tfjs backend could be initialised (${failures.join('; ')})`, { type: 'backend' });
}

/**
 * Initialises the backend: `name` if given, else `POPTFJS_BACKEND` if set,
 * else the best available. Returns the backend in use.
 */
export function initBackend(name?: string): Promise<BackendName> {
  const forcedName = name ?? process.env.POPTFJS_BACKEND;
  const forced = forcedName ? parseBackendName(forcedName, name ? 'Options.backend' : 'POPTFJS_BACKEND') : undefined;
  if (forced === undefined) {
    chosen ??= choose(undefined);
    return chosen;
  }
  if (tf.getBackend() === forced) return Promise.resolve(forced);
  chosen = choose(forced);
  return chosen;
}

/** The backend currently in use. */
export function currentBackend(): string {
  return tf.getBackend();
}
