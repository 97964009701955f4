/**
 * The wasm `Transpose` of 4-byte elements on tfjs's one-thread wasm build
 * (`POPTFJS_WASM_THREADS=1`), whose memory its SIMD routine finds
 * differently from the threaded build's.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { wasmThreads } from '../../../lib/backend/wasm_threads.js';
import { useWasmTrainingBackend } from './kernel_reference.js';
import { transposeOfFourByteElementsTests } from './transpose_cases.js';

describe('wasm Transpose on the one-thread build', () => {
  beforeAll(async () => {
    process.env.POPTFJS_WASM_THREADS = '1';
    await useWasmTrainingBackend();
  });

  it('runs on one thread', () => {
    expect(wasmThreads()).toBe(1);
  });

  transposeOfFourByteElementsTests();
});
