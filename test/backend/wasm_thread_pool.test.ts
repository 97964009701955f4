import * as tf from '@tensorflow/tfjs';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../lib/backend/backend_selection.js';
import { computeOnWasmThreads, switchableWasmThreads, threadPoolAddress, wasmComputeThreads, withWasmThreads } from '../../lib/backend/wasm_thread_pool.js';
import { MAX_WASM_THREADS } from '../../lib/backend/wasm_threads.js';

const require = createRequire(import.meta.url);
const WASM_OUT = join(dirname(require.resolve('@tensorflow/tfjs-backend-wasm/package.json')), 'wasm-out');

/** A section: its id, then its contents prefixed with their size (all sizes here fit one LEB128 byte). */
const section = (id: number, contents: number[]) => [id, contents.length, ...contents];
const utf8 = (text: string) => [text.length, ...new TextEncoder().encode(text)];

/** A wasm module with one function, of no arguments returning an i32, exported as `name`, whose body is `code` (after no locals). */
function moduleWith(name: string, code: number[]): Uint8Array {
  const body = [0, ...code, 0x0b];
  return new Uint8Array([
    0x00,
    0x61,
    0x73,
    0x6d,
    0x01,
    0x00,
    0x00,
    0x00,
    ...section(1, [1, 0x60, 0, 1, 0x7f]),
    ...section(3, [1, 0]),
    ...section(7, [1, ...utf8(name), 0, 0]),
    ...section(10, [1, body.length, ...body]),
  ]);
}

describe('finding the thread pool global of the wasm backend', () => {
  it('reads the address tfjs 4.22 threaded build loads in get_threads_count', () => {
    const binary = readFileSync(join(WASM_OUT, 'tfjs-backend-wasm-threaded-simd.wasm'));
    expect(threadPoolAddress(binary)).toBe(23564);
  });

  it('adds the load offset to the constant address', () => {
    // i32.const 1024; i32.load align=2 offset=8
    expect(threadPoolAddress(moduleWith('get_threads_count', [0x41, 0x80, 0x08, 0x28, 0x02, 0x08]))).toBe(1032);
  });

  it('is undefined when the function does not begin by loading a word, is missing, or the binary is cut short', () => {
    expect(threadPoolAddress(moduleWith('get_threads_count', [0x41, 0x7f]))).toBeUndefined(); // i32.const -1
    expect(threadPoolAddress(moduleWith('get_threads_count', [0x41, 0x02, 0x28, 0x02, 0x00]))).toBeUndefined(); // address 2: not a word
    expect(threadPoolAddress(moduleWith('threads', [0x41, 0x80, 0x08, 0x28, 0x02, 0x00]))).toBeUndefined();
    const whole = moduleWith('get_threads_count', [0x41, 0x80, 0x08, 0x28, 0x02, 0x00]);
    expect(threadPoolAddress(whole.subarray(0, whole.length - 4))).toBeUndefined();
  });
});

const cores = Math.min(availableParallelism(), MAX_WASM_THREADS);

describe.skipIf(cores < 2 || process.env.POPTFJS_WASM_THREADS !== undefined)('switching the wasm backend between its pool and one thread', () => {
  /** The pool's threads as the backend itself reports them now (-1: no pool). */
  const backendThreads = () => (tf.backend() as unknown as { wasm: { tfjs: { getThreadsCount(): number } } }).wasm.tfjs.getThreadsCount();

  beforeAll(async () => {
    await initBackend('wasm');
  });

  it('starts switchable, on all the cores, and the backend sees each switch', () => {
    expect(switchableWasmThreads()).toBe(cores);
    expect(wasmComputeThreads()).toBe(cores);
    computeOnWasmThreads(1);
    expect(wasmComputeThreads()).toBe(1);
    expect(backendThreads()).toBe(-1);
    computeOnWasmThreads(cores);
    expect(backendThreads()).toBe(cores);
  });

  it('computes the same numbers, bit for bit, on one thread and on the pool', () => {
    const a = tf.randomNormal([64, 300], 0, 1, 'float32', 1);
    const b = tf.randomNormal([300, 200], 0, 1, 'float32', 2);
    const x = tf.randomNormal([8, 20, 20, 4], 0, 1, 'float32', 3) as tf.Tensor4D;
    const w = tf.randomNormal([3, 3, 4, 16], 0, 1, 'float32', 4) as tf.Tensor4D;
    const compute = () => [tf.matMul(a, b).dataSync(), tf.conv2d(x, w, 1, 'same').dataSync()];
    const one = withWasmThreads(1, compute);
    const pool = withWasmThreads(cores, compute);
    expect(pool).toEqual(one);
  });

  it('puts back the threads of before after withWasmThreads, also when its function throws', () => {
    withWasmThreads(1, () => expect(wasmComputeThreads()).toBe(1));
    expect(wasmComputeThreads()).toBe(cores);
    computeOnWasmThreads(1);
    expect(() =>
      withWasmThreads(cores, () => {
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(wasmComputeThreads()).toBe(1);
    computeOnWasmThreads(cores);
  });
});
