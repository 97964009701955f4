/**
 * One input's part of every row of a concatenation, copied by a
 * WebAssembly SIMD routine in the wasm backend's memory.
 *
 * The routine copies `rows` parts of `part` 4-byte elements, lying one
 * after another at the source, into rows of `width` elements at the
 * destination: four elements at a time as one vector, the last one to
 * three one at a time. Joining two `[1, 55, 55, 64]` channels-last tensors
 * (a SqueezeNet fire module) takes two calls instead of 6050
 * `copyWithin` calls made from JavaScript.
 */
import { add, bytes, copyElements, get, i32, loop, mul, type RoutineCode, set, simdRoutine, type WasmMemory } from './wasm_simd_routine.js';

// Parameters (byte addresses, then sizes in elements).
const SRC = 0,
  DST = 1,
  ROWS = 2,
  PART = 3,
  WIDTH = 4;
// i32 locals.
const R = 5,
  E = 6,
  S = 7,
  D = 8,
  END = 9;

const body = loop(R, i32(0), get(ROWS), i32(1), [
  ...add(get(SRC), bytes(mul(get(R), get(PART)))),
  ...set(S),
  ...add(get(DST), bytes(mul(get(R), get(WIDTH)))),
  ...set(D),
  // The row's part: its vectors, then its elements.
  ...copyElements(E, END, i32(0), get(PART), get(D), get(S)),
]);

const code: RoutineCode = { name: 'concatRows', params: 5, i32Locals: 5, v128Locals: 0, body };

/**
 * The routine on `memory`: `(src, dst, rows, part, width)` copies `rows`
 * consecutive parts of `part` 4-byte elements at byte address `src` into
 * rows of `width` elements starting at byte address `dst` (the part's place
 * in the first row). Undefined where the engine has no WebAssembly SIMD or
 * the memory is not found.
 */
export function concatRowsSimd(memory: WasmMemory | undefined): ((src: number, dst: number, rows: number, part: number, width: number) => void) | undefined {
  return simdRoutine(memory, code);
}
