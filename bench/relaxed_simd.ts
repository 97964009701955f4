/**
 * WebAssembly relaxed SIMD for the benchmarks: poptfjs's inference
 * convolutions on wasm use its fused multiply-add where the engine compiles
 * it (the `MultiplyAddConvolution` pattern). Node 22 does by default; Node 20
 * has it behind `--experimental-wasm-relaxed-simd`, which the benchmarks set
 * there, as a user would start node with it. The line returned says which.
 */
import v8 from 'node:v8';
import { relaxedSimdSupported } from '../lib/backend/wasm_kernels/wasm_simd_routine.js';

/** Turns relaxed SIMD on where it is behind a flag; returns a line saying how it is on, or that it is not. */
export function enableRelaxedSimd(): string {
  if (relaxedSimdSupported()) return "WebAssembly relaxed SIMD: on (the engine's default)";
  v8.setFlagsFromString('--experimental-wasm-relaxed-simd');
  if (relaxedSimdSupported()) return `WebAssembly relaxed SIMD: on (Node ${process.versions.node} has it behind --experimental-wasm-relaxed-simd, which the benchmark set)`;
  return `WebAssembly relaxed SIMD: not available in Node ${process.versions.node} (inference convolutions run on XNNPACK)`;
}
