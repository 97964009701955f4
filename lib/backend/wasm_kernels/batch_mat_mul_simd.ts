/**
 * A batch of float32 matrix products by a WebAssembly SIMD routine in the
 * wasm backend's memory.
 *
 * The routine computes `C[b] = A[b] · B[b]` for row-major `[rows, depth]`
 * and `[depth, columns]` matrices, the columns a multiple of 4, in tiles of
 * 4 rows by 8 columns: eight vector accumulators, and at each step along
 * the depth two vectors of a row of B multiplied by each of the four rows'
 * element of A (splat) and added (no fused multiply-add in 128-bit wasm
 * SIMD, so the sums are those of a plain loop over the depth, in order).
 * The rows beyond the last 4 take tiles of one row, the columns beyond the
 * last 8 tiles of 4. XNNPACK's product packs its right matrix first (about
 * 20 µs for 64 × 64), which dominates a transformer's per-head attention
 * products; this routine reads B as it is.
 */
import { add, bytes, get, i32, loop, memory, mul, Op, type RoutineCode, set, SimdOp, simd, simdRoutine, type WasmMemory, zeros } from './wasm_simd_routine.js';
import { runSimdRoutine } from './simd_routine_threads.js';

// Parameters (byte addresses, sizes in elements, batch steps in bytes).
const A = 0,
  B = 1,
  C = 2,
  BATCH = 3,
  ROWS = 4,
  DEPTH = 5,
  COLS = 6,
  A_STEP = 7,
  B_STEP = 8;
// i32 locals.
const BI = 9,
  I = 10,
  J = 11,
  KB = 12,
  PB = 13,
  AB = 14,
  BB = 15,
  CB = 16,
  ROWS4 = 17,
  COLS8 = 18,
  DEPTH_BYTES = 19,
  COLS_BYTES = 20,
  PA0 = 21;
// v128 locals: the 4 × 2 accumulators, two vectors of a row of B, a splat element of A.
const ACC = 25,
  BV = 33,
  AV = 35;

/** The accumulator of row r, vector v of a tile. */
const acc = (r: number, v: number): number => ACC + 2 * r + v;

/** Adds `count` 4-byte elements to the i32 in local `local`. */
const advance = (local: number, count: number[]): number[] => [...add(get(local), bytes(count)), ...set(local)];

/**
 * The tile of `rows` rows (1-4) by `vectors` vectors (1-2) of four columns at row I, column J of the current
 * matrices: accumulates along the depth, then stores it to C.
 */
function tile(rows: number, vectors: number): number[] {
  const range = (n: number) => [...new Array<number>(n).keys()];
  const cells = range(rows).flatMap((r) => range(vectors).map((v) => [r, v] as const));
  return [
    ...cells.flatMap(([r, v]) => [...zeros, ...set(acc(r, v))]),
    // The rows of A, and B's row 0 at column J.
    ...range(rows).flatMap((r) => [...add(get(AB), bytes(mul(add(get(I), i32(r)), get(DEPTH)))), ...set(PA0 + r)]),
    ...add(get(BB), bytes(get(J))),
    ...set(PB),
    ...loop(KB, i32(0), get(DEPTH_BYTES), i32(4), [
      ...range(vectors).flatMap((v) => [...get(PB), ...memory(SimdOp.Load, 16 * v), ...set(BV + v)]),
      ...range(rows).flatMap((r) => [
        ...add(get(PA0 + r), get(KB)),
        Op.F32Load,
        2,
        0,
        ...simd(SimdOp.F32x4Splat),
        ...set(AV),
        ...range(vectors).flatMap((v) => [...get(acc(r, v)), ...get(AV), ...get(BV + v), ...simd(SimdOp.F32x4Mul), ...simd(SimdOp.F32x4Add), ...set(acc(r, v))]),
      ]),
      ...add(get(PB), get(COLS_BYTES)),
      ...set(PB),
    ]),
    ...cells.flatMap(([r, v]) => [...add(get(CB), bytes(add(mul(add(get(I), i32(r)), get(COLS)), get(J)))), ...get(acc(r, v)), ...memory(SimdOp.Store, 16 * v)]),
  ];
}

/** The tiles of `rows` rows along the columns of row I: 8 columns at a time, then one of 4 if 4 are left. */
const rowTiles = (rows: number): number[] => [
  ...loop(J, i32(0), get(COLS8), i32(8), tile(rows, 2)),
  ...get(COLS8),
  ...get(COLS),
  Op.I32LtS,
  Op.If,
  0x40,
  ...get(COLS8),
  ...set(J),
  ...tile(rows, 1),
  Op.End,
];

const body = [
  ...mul(get(DEPTH), i32(4)),
  ...set(DEPTH_BYTES),
  ...mul(get(COLS), i32(4)),
  ...set(COLS_BYTES),
  ...get(ROWS),
  ...i32(-4),
  Op.I32And,
  ...set(ROWS4),
  ...get(COLS),
  ...i32(-8),
  Op.I32And,
  ...set(COLS8),
  ...get(A),
  ...set(AB),
  ...get(B),
  ...set(BB),
  ...get(C),
  ...set(CB),
  ...loop(BI, i32(0), get(BATCH), i32(1), [
    ...loop(I, i32(0), get(ROWS4), i32(4), rowTiles(4)),
    ...loop(I, get(ROWS4), get(ROWS), i32(1), rowTiles(1)),
    ...add(get(AB), get(A_STEP)),
    ...set(AB),
    ...add(get(BB), get(B_STEP)),
    ...set(BB),
    ...advance(CB, mul(get(ROWS), get(COLS))),
  ]),
];

const code: RoutineCode = { name: 'batchMatMul', params: 9, i32Locals: 16, v128Locals: 11, body };

/** The shapes of a batch of products: `batch` products of `[rows, depth]` by `[depth, cols]`. */
export interface BatchProduct {
  readonly batch: number;
  readonly rows: number;
  readonly depth: number;
  readonly cols: number;
}

/** Whether the routine computes products of these sizes: columns a multiple of 4, at least one of everything. */
export function simdProductFits(p: BatchProduct): boolean {
  return p.cols % 4 === 0 && p.batch > 0 && p.rows > 0 && p.depth > 0 && p.cols > 0;
}

/**
 * Writes the `batch` products of float32 matrices at byte addresses `a`
 * (`[rows, depth]` each, `aStep` bytes apart: 0 repeats one matrix) and `b`
 * (`[depth, cols]`, `bStep` bytes apart) to `c` (`[batch, rows, cols]`) and
 * returns true; returns false without writing where the engine has no
 * WebAssembly SIMD or the memory is not found. The sizes must fit
 * ({@link simdProductFits}).
 */
export function batchMatMulSimd(memory: WasmMemory | undefined, a: number, b: number, c: number, p: BatchProduct, aStep: number, bStep: number): boolean {
  const routine = simdRoutine(memory, code);
  if (routine === undefined) return false;
  routine(a, b, c, p.batch, p.rows, p.depth, p.cols, aStep, bStep);
  return true;
}

/**
 * Writes the product of the float32 matrices at byte addresses `a`
 * (`[rows, depth]`) and `b` (`[depth, cols]`) to `c` (`[rows, cols]`), its
 * rows in chunks of four shared with the helper thread of
 * simd_routine_threads.ts where both threads may compute, and returns true;
 * returns false without writing where the engine has no WebAssembly SIMD or
 * the memory is not found. The sizes must fit ({@link simdProductFits}).
 * Each element is the same sum as on one thread.
 */
export function matMulSimdOnThreads(memory: WasmMemory | undefined, a: number, b: number, c: number, rows: number, depth: number, cols: number): boolean {
  return runSimdRoutine(memory, code, {
    args: [a, b, c, 1, rows, depth, cols, 0, 0],
    steps: [4 * depth, 0, 4 * cols, 0, 0, 0, 0, 0, 0],
    countArg: ROWS,
    units: rows,
    // A row of A and of C, and a quarter of B (read once per tile of four rows).
    unitBytes: 4 * (depth + cols) + depth * cols,
    granule: 4,
  });
}
