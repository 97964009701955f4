/**
 * A batch of three-row matrices of 4-byte elements transposed by a
 * WebAssembly SIMD routine in the wasm backend's memory: a channels-first
 * RGB image made channels-last (`[3, 50176]` to `[50176, 3]` for 224 × 224).
 *
 * The routine turns `[batch, 3, cols]` into `[batch, cols, 3]` four columns
 * at a time: four elements of each row are loaded as vectors, interleaved by
 * six lane shuffles and stored as three vectors; the columns beyond the last
 * multiple of four are copied one element at a time. The blocked routine of
 * transpose_simd.ts needs four rows, and the wasm backend's kernel moves one
 * element at a time (0.13 ms for that image).
 */
import { add, bytes, get, i32, loop, memory, mul, Op, type RoutineCode, set, SimdOp, shuffle32, simdRoutine, type WasmMemory } from './wasm_simd_routine.js';

// Parameters (byte addresses, then sizes in elements).
const SRC = 0,
  DST = 1,
  BATCH = 2,
  COLS = 3;
// i32 locals.
const B = 4,
  C = 5,
  S = 6,
  D = 7,
  COLS4 = 8,
  R = 9;
// v128 locals: the three rows' vectors, then the shuffled pairs.
const ROW0 = 10,
  T = 13,
  U = 14,
  V = 15;

/** Loads row `row`'s four elements at column C into ROW0 + row. */
const loadRow = (row: number): number[] => [...add(get(S), bytes(add(mul(i32(row), get(COLS)), get(C)))), ...memory(SimdOp.Load), ...set(ROW0 + row)];

/** Stores the v128 left by `value` as output vector `i` (elements 4i to 4i + 3) of the columns at C. */
const storeOut = (i: number, value: number[]): number[] => [...add(get(D), bytes(mul(get(C), i32(3)))), ...value, ...memory(SimdOp.Store, 16 * i)];

const block = [
  ...loadRow(0),
  ...loadRow(1),
  ...loadRow(2),
  // T = [a0 b0 a1 b1], U = [a2 b2 a3 b3]
  ...get(ROW0),
  ...get(ROW0 + 1),
  ...shuffle32([0, 4, 1, 5]),
  ...set(T),
  ...get(ROW0),
  ...get(ROW0 + 1),
  ...shuffle32([2, 6, 3, 7]),
  ...set(U),
  // [a0 b0 c0 a1]
  ...storeOut(0, [...get(T), ...get(ROW0 + 2), ...shuffle32([0, 1, 4, 2])]),
  // V = [b1 c1 . .], then [b1 c1 a2 b2]
  ...get(T),
  ...get(ROW0 + 2),
  ...shuffle32([3, 5, 0, 0]),
  ...set(V),
  ...storeOut(1, [...get(V), ...get(U), ...shuffle32([0, 1, 4, 5])]),
  // [c2 a3 b3 c3]
  ...storeOut(2, [...get(ROW0 + 2), ...get(U), ...shuffle32([2, 6, 7, 3])]),
];

/** dst[C, R] = src[R, C] for one element. */
const element = [...add(get(D), bytes(add(mul(get(C), i32(3)), get(R)))), ...add(get(S), bytes(add(mul(get(R), get(COLS)), get(C)))), Op.I32Load, 2, 0, Op.I32Store, 2, 0];

const body = [
  ...get(COLS),
  ...i32(-4),
  Op.I32And,
  ...set(COLS4),
  ...loop(B, i32(0), get(BATCH), i32(1), [
    ...bytes(mul(mul(get(B), i32(3)), get(COLS))),
    ...set(R),
    ...add(get(SRC), get(R)),
    ...set(S),
    ...add(get(DST), get(R)),
    ...set(D),
    ...loop(C, i32(0), get(COLS4), i32(4), block),
    ...loop(C, get(COLS4), get(COLS), i32(1), loop(R, i32(0), i32(3), i32(1), element)),
  ]),
];

const code: RoutineCode = { name: 'transposeThreeRows', params: 4, i32Locals: 6, v128Locals: 6, body };

/**
 * Writes `[batch, 3, cols]` 4-byte elements at byte address `src` of
 * `memory` transposed to `[batch, cols, 3]` at `dst` and returns true;
 * returns false without writing where the engine has no WebAssembly SIMD or
 * the memory is not found.
 */
export function threeRowTransposeSimd(memory: WasmMemory | undefined, src: number, dst: number, batch: number, cols: number): boolean {
  const routine = simdRoutine(memory, code);
  if (routine === undefined) return false;
  routine(src, dst, batch, cols);
  return true;
}
