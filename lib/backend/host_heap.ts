/**
 * The memory the tfjs backend gives tensors in this process (or worker
 * thread), and how much of it they use: the wasm backend's heap is at most
 * 4 GiB - 64 KiB (wasm32; the emscripten build's `getHeapMax()`), the cpu
 * and tfjs-node backends have no limit of their own.
 * `POPTFJS_HOST_MEMORY_LIMIT` sets a lower limit for any backend (bytes, or
 * a number with KiB, MiB or GiB).
 */
import * as tf from '@tensorflow/tfjs';
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';
import { PoptfjsError } from '../common/errors.js';
import { engine } from './tfjs_internals.js';
import { filterCopyBytes } from './wasm_kernels/packed_filter.js';

/** The environment variable that lowers the memory poptfjs lets tensors take. */
export const HOST_MEMORY_LIMIT_VARIABLE = 'POPTFJS_HOST_MEMORY_LIMIT';

/** The largest heap of the wasm backend: 4 GiB less 64 KiB (wasm32). */
export const WASM_HEAP_LIMIT = 4294901760;

/**
 * The share of a heap tensors may take: the rest is left to the backend's own
 * buffers (XNNPACK's packed weights and indirection buffers, the allocator's
 * fragmentation), which tfjs does not count.
 */
export const TENSOR_SHARE_OF_HEAP = 7 / 8;

/** The memory tensors may take, and how much they take now. */
export interface HostHeap {
  /** What the limit is, for messages: "the wasm backend's 4 GiB heap". */
  readonly description: string;
  /** Bytes tensors may take ({@link TENSOR_SHARE_OF_HEAP} of the heap); undefined when the backend sets no limit. */
  readonly limit: number | undefined;
  /** Bytes the tensors of this process (or worker) take now, with the copies of filters the wasm routines hold (packed_filter.ts). */
  used(): number;
  /**
   * Bytes the backend's heap has now: the wasm backend's memory, which only
   * grows, so this is its peak so far; undefined for backends without a heap
   * of their own.
   */
  size(): number | undefined;
}

const UNITS: Record<string, number> = { '': 1, B: 1, KIB: 1024, MIB: 1024 ** 2, GIB: 1024 ** 3 };

/** The limit `POPTFJS_HOST_MEMORY_LIMIT` sets, if any; a clear error for a value it cannot read. */
export function hostMemoryLimitFromEnvironment(value = process.env[HOST_MEMORY_LIMIT_VARIABLE]): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const match = /^\s*(\d+(?:\.\d+)?)\s*(B|KiB|MiB|GiB)?\s*$/i.exec(value);
  const bytes = match ? Number(match[1]) * UNITS[(match[2] ?? '').toUpperCase()]! : NaN;
  if (!Number.isFinite(bytes) || bytes <= 0) {
    throw new PoptfjsError(`${HOST_MEMORY_LIMIT_VARIABLE}='${value}' is not a memory size; expected bytes or a number with KiB, MiB or GiB (e.g. 512MiB)`, {
      type: 'options',
    });
  }
  return Math.floor(bytes);
}

/** The heap of the backend tfjs uses now. */
export function hostHeap(): HostHeap {
  const backend = tf.getBackend();
  const override = hostMemoryLimitFromEnvironment();
  const tensorBytes = () => (engine().state as unknown as { numBytes: number }).numBytes;
  const used = backend === 'wasm' ? () => tensorBytes() + filterCopyBytes(tf.backend() as BackendWasm) : tensorBytes;
  const size = () => (backend === 'wasm' ? (tf.backend() as unknown as { wasm: { HEAPU8: Uint8Array } }).wasm.HEAPU8.length : undefined);
  const share = (heap: number) => Math.floor(heap * TENSOR_SHARE_OF_HEAP);
  if (override !== undefined)
    return { description: `a heap of ${process.env[HOST_MEMORY_LIMIT_VARIABLE]} (${HOST_MEMORY_LIMIT_VARIABLE})`, limit: share(override), used, size };
  if (backend === 'wasm') return { description: "the wasm backend's 4 GiB heap (wasm32)", limit: share(WASM_HEAP_LIMIT), used, size };
  return { description: `the '${backend}' backend, which sets no limit`, limit: undefined, used, size };
}

let peakBytes = 0;

/** Notes that the tensors of this thread take, or are about to take, `bytes` (the check before each kernel does). */
export function noteHostMemoryUse(bytes: number): void {
  if (bytes > peakBytes) peakBytes = bytes;
}

/**
 * The most bytes the tensors of this thread took at any kernel poptfjs ran
 * under a heap limit since {@link resetHostMemoryPeak} (what the kernel's
 * inputs and everything else alive took, plus its outputs): the figure a
 * step's host-memory estimate models. 0 if no kernel ran under a limit.
 */
export function hostMemoryPeak(): number {
  return peakBytes;
}

/** Starts {@link hostMemoryPeak} again from nothing. */
export function resetHostMemoryPeak(): void {
  peakBytes = 0;
}
