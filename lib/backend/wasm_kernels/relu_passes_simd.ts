/**
 * The passes around a `Relu` of a training graph as WebAssembly SIMD
 * routines in the wasm backend's memory, four elements at a time, with the
 * instructions of the wasm backend's own kernels, so the numbers are theirs
 * bit for bit:
 *
 * - `addRelu`: `sum = a + b` (`f32x4.add`, as XNNPACK's `Add`) with `b`
 *   repeated along `a`, and `relu = max(sum, 0)` compared as signed 32-bit
 *   integers (`i32x4.max_s`, as XNNPACK's `Relu`: -0 and NaNs with the sign
 *   bit set become 0, other NaNs stay as they are), in one pass that writes
 *   both;
 * - `reluGrad`: `dy · Step(x)` (`f32x4.mul`, as XNNPACK's `Multiply`), with
 *   `Step(x)` the wasm `Step` kernel's: `x` itself where `x` is NaN, else 1
 *   where `x > 0` and 0 elsewhere.
 *
 * Elements past the last whole group of four (per row of `a` for `addRelu`)
 * go through the same instructions one at a time (`v128.load32_splat`, then
 * lane 0 stored).
 */
import {
  add,
  bytes,
  get,
  i32,
  loadSplat,
  loop,
  memory,
  mul,
  Op,
  ones,
  type RoutineCode,
  set,
  SimdOp,
  simd,
  storeFirstLane,
  type WasmMemory,
  zeros,
} from './wasm_simd_routine.js';
import { runSimdRoutine } from './simd_routine_threads.js';

/** A loop over byte offsets `at` from `from` to `to` in steps of `step` bytes. */
const byteLoop = (at: number, from: number[], to: number[], step: number, body: number[]): number[] => loop(at, from, to, i32(step), body);

// addRelu parameters (byte addresses, then counts of elements), then i32 locals.
const A = 0,
  B = 1,
  SUM = 2,
  RELU = 3,
  ROWS = 4,
  LENGTH = 5;
const ROW = 6,
  AT = 7,
  ROW_BYTES = 8,
  WHOLE_BYTES = 9,
  BASE = 10,
  V = 11;

/** `sum = a + b` at byte offset AT of the row at BASE (b at offset AT), stored by `store` after `load`. */
const addReluStep = (load: number[], store: number[]): number[] => [
  ...add(get(A), add(get(BASE), get(AT))),
  ...load,
  ...add(get(B), get(AT)),
  ...load,
  ...simd(SimdOp.F32x4Add),
  ...set(V),
  ...add(get(SUM), add(get(BASE), get(AT))),
  ...get(V),
  ...store,
  ...add(get(RELU), add(get(BASE), get(AT))),
  ...get(V),
  ...zeros,
  ...simd(SimdOp.I32x4MaxS),
  ...store,
];

const addReluCode: RoutineCode = {
  name: 'addRelu',
  params: 6,
  i32Locals: 5,
  v128Locals: 1,
  body: [
    ...bytes(get(LENGTH)),
    ...set(ROW_BYTES),
    ...get(ROW_BYTES),
    ...i32(-16),
    Op.I32And,
    ...set(WHOLE_BYTES),
    ...loop(ROW, i32(0), get(ROWS), i32(1), [
      ...mul(get(ROW), get(ROW_BYTES)),
      ...set(BASE),
      ...byteLoop(AT, i32(0), get(WHOLE_BYTES), 16, addReluStep(memory(SimdOp.Load), memory(SimdOp.Store))),
      ...byteLoop(AT, get(WHOLE_BYTES), get(ROW_BYTES), 4, addReluStep(loadSplat, storeFirstLane)),
    ]),
  ],
};

// reluGrad parameters (byte addresses, then a count of elements), then locals.
const DY = 0,
  X = 1,
  OUT = 2,
  COUNT = 3;
const G_AT = 4,
  G_BYTES = 5,
  G_WHOLE = 6,
  XV = 7;

/** `out = dy · Step(x)` at byte offset G_AT. */
const reluGradStep = (load: number[], store: number[]): number[] => [
  ...add(get(OUT), get(G_AT)),
  ...add(get(DY), get(G_AT)),
  ...load,
  ...add(get(X), get(G_AT)),
  ...load,
  ...set(XV),
  // Step(x): x where x ≠ x (NaN), else (x > 0) & 1.
  ...get(XV),
  ...get(XV),
  ...zeros,
  ...simd(SimdOp.F32x4Gt),
  ...ones,
  ...simd(SimdOp.And),
  ...get(XV),
  ...get(XV),
  ...simd(SimdOp.F32x4Ne),
  ...simd(SimdOp.Bitselect),
  ...simd(SimdOp.F32x4Mul),
  ...store,
];

const reluGradCode: RoutineCode = {
  name: 'reluGrad',
  params: 4,
  i32Locals: 3,
  v128Locals: 1,
  body: [
    ...bytes(get(COUNT)),
    ...set(G_BYTES),
    ...get(G_BYTES),
    ...i32(-16),
    Op.I32And,
    ...set(G_WHOLE),
    ...byteLoop(G_AT, i32(0), get(G_WHOLE), 16, reluGradStep(memory(SimdOp.Load), memory(SimdOp.Store))),
    ...byteLoop(G_AT, get(G_WHOLE), get(G_BYTES), 4, reluGradStep(loadSplat, storeFirstLane)),
  ],
};

/**
 * Writes `a + b` at byte address `sum` and its relu at `relu` for `rows`
 * rows of `length` float32 elements at `a`, `b` being one row, and returns
 * true; returns false without writing where the routine cannot run.
 */
export function addReluSimd(memory: WasmMemory | undefined, a: number, b: number, sum: number, relu: number, rows: number, length: number): boolean {
  const rowBytes = 4 * length;
  return runSimdRoutine(memory, addReluCode, {
    args: [a, b, sum, relu, rows, length],
    steps: [rowBytes, 0, rowBytes, rowBytes, 0, 0],
    countArg: 4,
    units: rows,
    unitBytes: 3 * rowBytes,
  });
}

/**
 * Writes `dy · Step(x)` of `count` float32 elements at byte addresses `dy`
 * and `x` to `out` and returns true; returns false without writing where
 * the routine cannot run.
 */
export function reluGradSimd(memory: WasmMemory | undefined, dy: number, x: number, out: number, count: number): boolean {
  return runSimdRoutine(memory, reluGradCode, { args: [dy, x, out, count], steps: [4, 4, 4, 0], countArg: 3, units: count, unitBytes: 12, granule: 4 });
}
