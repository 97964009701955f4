/**
 * Batches of float32 matrix products by WebAssembly SIMD routines in the
 * wasm backend's memory.
 *
 * A routine computes `C[b] = A[b] · B[b]` for row-major `[rows, depth]`
 * and `[depth, columns]` matrices, the columns a multiple of 4, in tiles of
 * 4 rows by 8 columns: eight vector accumulators, and at each step along
 * the depth two vectors of a row of B multiplied by each of the four rows'
 * element of A (splat) and added. The rows beyond the last 4 take tiles of
 * one row, the columns beyond the last 8 tiles of 4. XNNPACK's product packs
 * its right matrix first (about 20 µs for 64 × 64), which dominates a
 * transformer's per-head attention products; these routines read B as it
 * is, in panels of columns that stay in the core's cache while every row
 * tile passes over them.
 *
 * Two ways to multiply and add:
 * - `separate`: a multiply, then an add (128-bit wasm SIMD has no fused
 *   multiply-add), so the sums are those of a plain loop over the depth, in
 *   order;
 * - `fused`: relaxed SIMD's `f32x4.relaxed_madd`, one fused multiply-add
 *   where the processor has one (one rounding instead of two, as
 *   onnxruntime's and PyTorch's kernels compute): about 1.5 times the
 *   throughput on this project's x86 machines. Engines without relaxed SIMD
 *   (Node before 22 unless started with `--experimental-wasm-relaxed-simd`)
 *   refuse the routine.
 *
 * A product may also start each tile from a bias row (added before the
 * depth's terms) and end it with a relu or relu6; read B packed in panels of 8
 * columns (`[ceil(cols / 8), depth, 8]`: a tile's columns of B are then one
 * stream, where B as it is gives 32 bytes from each of its rows; a
 * convolution's filter is packed once, packed_filter.ts); and its A may be
 * the windows of a convolution read in place: before a row tile's columns,
 * a table of where each row's window meets the input, per tap (or per run
 * of taps along the width, where they follow each other in memory), is
 * written at A; the depth then runs over the table's entries and, within
 * each, over its channels. Computing those addresses inside the depth loop instead kept
 * too many values live for the registers and ran at half the speed.
 */
import type { MultiplyAddActivation } from '../multiply_add_attribute.js';
import {
  activate,
  add,
  bytes,
  get,
  i32,
  loop,
  memory,
  mul,
  Op,
  pick,
  type RoutineCode,
  set,
  SimdOp,
  simd,
  simdRoutine,
  type WasmMemory,
  when,
  zeros,
} from './wasm_simd_routine.js';
import { runSimdRoutine } from './simd_routine_threads.js';

/** How a product's tiles compute: the multiply-add, whether a bias row starts the sums, and the activation that ends them. */
export interface ProductVariant {
  readonly multiplyAdd: 'separate' | 'fused';
  readonly bias: boolean;
  readonly activation: MultiplyAddActivation;
  /** A is the windows of a convolution's input (read in place, {@link ConvolutionWindows}) instead of a matrix. */
  readonly windows: boolean;
  /** B is packed in panels of 8 columns, `[ceil(cols / 8), depth, 8]` (the last one's columns beyond `cols` are zeros), instead of `[depth, cols]`. */
  readonly packedB: boolean;
  /**
   * C's values start the sums, instead of zeros (or the bias): a product
   * along a long depth made as products of its parts in turn, each element
   * summed in the same order as by one product, bit for bit.
   */
  readonly accumulate?: boolean;
}

/** The plain product: separate multiply and add, no bias, no activation. */
export const PLAIN_PRODUCT: ProductVariant = { multiplyAdd: 'separate', bias: false, activation: 'linear', windows: false, packedB: false };

// Parameters (byte addresses, sizes in elements, batch steps in bytes; the panel's width in columns). COLS columns
// are computed, of C rows (and, unless B is packed, B rows) of STRIDE elements.
const A = 0,
  B = 1,
  C = 2,
  BATCH = 3,
  ROWS = 4,
  DEPTH = 5,
  COLS = 6,
  A_STEP = 7,
  B_STEP = 8,
  PANEL = 9,
  BIAS = 10,
  STRIDE = 11;
// Parameters of a product whose A is the windows of a convolution: the first row, the input (NHWC) and a row of
// zeros for the padding, the sizes, strides and padding before, and the taps along the width that a table entry
// covers (1, or the filter's width where no window reaches the padding at the sides: then they are one run).
const ROW0 = 12,
  X = 13,
  ZERO = 14,
  CIN = 15,
  IN_H = 16,
  IN_W = 17,
  OUT_HW = 18,
  OUT_W = 19,
  FH = 20,
  FW = 21,
  SH = 22,
  SW = 23,
  PT = 24,
  PL = 25,
  RUN = 26;
const PARAMS = 27;
// i32 locals.
const BI = 27,
  I = 28,
  J = 29,
  KB = 30,
  PB = 31,
  AB = 32,
  BB = 33,
  CB = 34,
  ROWS4 = 35,
  COLS8 = 36,
  DEPTH_BYTES = 37,
  STRIDE_BYTES = 38,
  PA0 = 39,
  JP = 43,
  PANEL_END = 44,
  IY0 = 45,
  IX0 = 46,
  BASE = 47,
  TI = 48,
  TJ = 49,
  RUN_BYTES = 50,
  Q = 51,
  TAPS = 52,
  T = 53,
  // The image, output row and column of the next row whose window the table gets.
  WB = 54,
  WOY = 55,
  WOX = 56;
const I32_LOCALS = 57 - PARAMS;
// v128 locals: the 4 × 2 accumulators, two vectors of a row of B, a splat element of A.
const ACC = 57,
  BV = 65,
  AV = 67;

/** 0 to n - 1. */
const range = (n: number): number[] => [...new Array<number>(n).keys()];

/** The accumulator of row r, vector v of a tile. */
const acc = (r: number, v: number): number => ACC + 2 * r + v;

/** Adds `count` 4-byte elements to the i32 in local `local`. */
const advance = (local: number, count: number[]): number[] => [...add(get(local), bytes(count)), ...set(local)];

/**
 * The tile of `rows` rows (1-4) by `vectors` vectors (1-2) of four columns at row I, column J of the current
 * matrices: accumulates along the depth, then stores it to C.
 */
function tile(variant: ProductVariant, rows: number, vectors: number): number[] {
  const cells = range(rows).flatMap((r) => range(vectors).map((v) => [r, v] as const));
  const cAddress = (r: number) => add(get(CB), bytes(add(mul(add(get(I), i32(r)), get(STRIDE)), get(J))));
  const start = (r: number, v: number) =>
    variant.accumulate ? [...cAddress(r), ...memory(SimdOp.Load, 16 * v)] : variant.bias ? [...add(get(BIAS), bytes(get(J))), ...memory(SimdOp.Load, 16 * v)] : zeros;
  const multiplyAdd = (r: number, v: number) =>
    variant.multiplyAdd === 'fused'
      ? [...get(AV), ...get(BV + v), ...get(acc(r, v)), ...simd(SimdOp.F32x4RelaxedMadd)]
      : [...get(acc(r, v)), ...get(AV), ...get(BV + v), ...simd(SimdOp.F32x4Mul), ...simd(SimdOp.F32x4Add)];
  const result = (r: number, v: number) => [...get(acc(r, v)), ...activate(variant.activation)];
  // One step along the depth: the B vectors at PB, times row r's element at PA_r + KB; then PB moves a row down.
  const depthStep = [
    ...range(vectors).flatMap((v) => [...get(PB), ...memory(SimdOp.Load, 16 * v), ...set(BV + v)]),
    ...range(rows).flatMap((r) => [
      ...add(get(PA0 + r), get(KB)),
      Op.F32Load,
      2,
      0,
      ...simd(SimdOp.F32x4Splat),
      ...set(AV),
      ...range(vectors).flatMap((v) => [...multiplyAdd(r, v), ...set(acc(r, v))]),
    ]),
    ...add(get(PB), variant.packedB ? i32(32) : get(STRIDE_BYTES)),
    ...set(PB),
  ];
  const along = variant.windows ? windowsDepth(rows, depthStep) : matrixDepth(rows, depthStep);
  return [
    ...cells.flatMap(([r, v]) => [...start(r, v), ...set(acc(r, v))]),
    // B's row 0 at column J.
    ...add(get(BB), bytes(variant.packedB ? mul(get(J), get(DEPTH)) : get(J))),
    ...set(PB),
    ...along,
    ...cells.flatMap(([r, v]) => [...cAddress(r), ...result(r, v), ...memory(SimdOp.Store, 16 * v)]),
  ];
}

/** The depth of a tile whose rows of A are rows of a matrix: PA_r is row r's start, KB runs over its bytes. */
function matrixDepth(rows: number, depthStep: number[]): number[] {
  return [
    ...range(rows).flatMap((r) => [...add(get(AB), bytes(mul(add(get(I), i32(r)), get(DEPTH)))), ...set(PA0 + r)]),
    ...loop(KB, i32(0), get(DEPTH_BYTES), i32(4), depthStep),
  ];
}

/**
 * The depth of a tile whose rows of A are convolution windows: for each entry of the table windowRows wrote at A (a
 * tap of the filter, or a run of taps along its width), PA_r is where row r's window meets the input there, and KB
 * runs over the entry's channels.
 */
function windowsDepth(rows: number, depthStep: number[]): number[] {
  return loop(TI, i32(0), get(TAPS), i32(1), [
    ...range(rows).flatMap((r) => [...add(get(AB), bytes(add(mul(add(get(I), i32(r)), get(TAPS)), get(TI)))), Op.I32Load, 2, 0, ...set(PA0 + r)]),
    ...loop(KB, i32(0), get(RUN_BYTES), i32(4), depthStep),
  ]);
}

/** The position of row row0 + I = (b·outH + oy)·outW + ox, for the first window of a panel's rows. */
const firstWindow = [
  ...[...get(ROW0), ...get(I), Op.I32Add, ...get(OUT_HW), Op.I32DivU],
  ...set(WB),
  ...[...get(ROW0), ...get(I), Op.I32Add, ...get(OUT_HW), Op.I32RemU],
  ...set(Q),
  ...[...get(Q), ...get(OUT_W), Op.I32DivU],
  ...set(WOY),
  ...[...get(Q), ...get(OUT_W), Op.I32RemU],
  ...set(WOX),
];

/** The position of the next row: ox + 1, or the next output row, or the next image (no divisions per row). */
const nextWindow = [
  ...add(get(WOX), i32(1)),
  ...set(WOX),
  ...when(
    [...get(WOX), ...get(OUT_W), Op.I32Eq],
    [
      ...i32(0),
      ...set(WOX),
      ...add(get(WOY), i32(1)),
      ...set(WOY),
      ...when([...get(WOY), ...get(OUT_HW), ...get(OUT_W), Op.I32DivU, Op.I32Eq], [...i32(0), ...set(WOY), ...add(get(WB), i32(1)), ...set(WB)]),
    ],
  ),
];

/**
 * The table of where the windows of rows I to I + rows - 1 meet the input, one byte address per row and entry at A
 * (`[rows, taps / run]`, the row of zeros for taps in the padding): the window of the row at (b, oy, ox) starts at
 * iy0 = oy·sh - top, ix0 = ox·sw - left of image b. The rows come in order from {@link firstWindow}.
 */
function windowRows(rows: number): number[] {
  return range(rows).flatMap((r) => [
    ...[...get(WOY), ...get(SH), Op.I32Mul, ...get(PT), Op.I32Sub],
    ...set(IY0),
    ...[...get(WOX), ...get(SW), Op.I32Mul, ...get(PL), Op.I32Sub],
    ...set(IX0),
    ...add(get(X), bytes(mul(mul(mul(get(WB), get(IN_H)), get(IN_W)), get(CIN)))),
    ...set(BASE),
    ...nextWindow,
    ...add(get(AB), bytes(mul(add(get(I), i32(r)), get(TAPS)))),
    ...set(T),
    ...loop(TI, i32(0), get(FH), i32(1), [
      ...loop(TJ, i32(0), get(FW), get(RUN), [
        ...get(T),
        ...add(get(BASE), bytes(mul(add(mul(add(get(IY0), get(TI)), get(IN_W)), add(get(IX0), get(TJ))), get(CIN)))),
        ...get(ZERO),
        ...[...add(get(IY0), get(TI)), ...get(IN_H), Op.I32LtU, ...add(get(IX0), get(TJ)), ...get(IN_W), Op.I32LtU, Op.I32And],
        Op.Select,
        Op.I32Store,
        2,
        0,
        ...add(get(T), i32(4)),
        ...set(T),
      ]),
    ]),
  ]);
}

/**
 * The tiles of `rows` rows along the current panel's columns of row I: 8 columns at a time, then, in the last panel,
 * one of 4 if 4 are left.
 */
const rowTiles = (variant: ProductVariant, rows: number): number[] => [
  ...(variant.windows ? windowRows(rows) : []),
  ...loop(J, get(JP), get(PANEL_END), i32(8), tile(variant, rows, 2)),
  ...when([...get(COLS8), ...get(COLS), Op.I32LtS, ...add(get(JP), get(PANEL)), ...get(COLS), Op.I32GeS, Op.I32And], [...get(COLS8), ...set(J), ...tile(variant, rows, 1)]),
];

const body = (variant: ProductVariant): number[] => [
  ...mul(get(DEPTH), i32(4)),
  ...set(DEPTH_BYTES),
  ...(variant.windows ? [...bytes(mul(get(RUN), get(CIN))), ...set(RUN_BYTES), ...mul(get(FH), [...get(FW), ...get(RUN), Op.I32DivU]), ...set(TAPS)] : []),
  ...mul(get(STRIDE), i32(4)),
  ...set(STRIDE_BYTES),
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
    ...loop(JP, i32(0), get(COLS), get(PANEL), [
      ...pick(add(get(JP), get(PANEL)), get(COLS8), Op.I32LtS),
      ...set(PANEL_END),
      ...(variant.windows ? [...i32(0), ...set(I), ...firstWindow] : []),
      ...loop(I, i32(0), get(ROWS4), i32(4), rowTiles(variant, 4)),
      ...loop(I, get(ROWS4), get(ROWS), i32(1), rowTiles(variant, 1)),
    ]),
    ...add(get(AB), get(A_STEP)),
    ...set(AB),
    ...add(get(BB), get(B_STEP)),
    ...set(BB),
    ...advance(CB, mul(get(ROWS), get(STRIDE))),
  ]),
];

const codes = new Map<string, RoutineCode>();

/** The routine of `variant` (one object per variant: routines are compiled once per code object). */
function productCode(variant: ProductVariant): RoutineCode {
  const key = `${variant.multiplyAdd},${variant.bias},${variant.activation},${variant.windows},${variant.packedB},${variant.accumulate === true}`;
  let code = codes.get(key);
  if (code === undefined) {
    code = { name: 'product', params: PARAMS, i32Locals: I32_LOCALS, v128Locals: 11, body: body(variant) };
    codes.set(key, code);
  }
  return code;
}

/** Whether the engine runs the routine of `variant` on `memory` (compiled at the first call; relaxed SIMD for a fused multiply-add). */
export function productRoutineReady(memory: WasmMemory | undefined, variant: ProductVariant): boolean {
  return simdRoutine(memory, productCode(variant)) !== undefined;
}

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
  const routine = simdRoutine(memory, productCode(PLAIN_PRODUCT));
  if (routine === undefined) return false;
  routine(a, b, c, p.batch, p.rows, p.depth, p.cols, aStep, bStep, p.cols, 0, p.cols, ...NO_WINDOWS);
  return true;
}

/** The sizes of a convolution's windows: the input's, the output's extents, the filter's, the strides and the padding before. */
export interface ConvolutionWindows {
  readonly batch: number;
  readonly inHeight: number;
  readonly inWidth: number;
  readonly inChannels: number;
  readonly outHeight: number;
  readonly outWidth: number;
  readonly filterHeight: number;
  readonly filterWidth: number;
  readonly strideHeight: number;
  readonly strideWidth: number;
  readonly top: number;
  readonly left: number;
}

/** The window parameters of a product whose A is a matrix (ROW0 to RUN). */
const NO_WINDOWS: readonly number[] = new Array<number>(PARAMS - ROW0).fill(0);

/** One product of float32 matrices in the wasm heap, for {@link matMulSimdOnThreads}. */
export interface ProductCall {
  /** Byte addresses of A (`[rows, depth]`; for windows, room for the `[rows, taps]` int32 table of where they meet the input), B (`[depth, cols]`, or packed: {@link ProductVariant.packedB}) and C (`[rows, cols]`). */
  readonly a: number;
  readonly b: number;
  readonly c: number;
  readonly rows: number;
  readonly depth: number;
  readonly cols: number;
  /** How the tiles compute (default {@link PLAIN_PRODUCT}). */
  readonly variant?: ProductVariant;
  /** Byte address of the bias row (`[cols]`) of a variant with a bias. */
  readonly bias?: number;
  /** Columns of B per panel, a multiple of 8 (default all of them): every row passes over a panel before the next. */
  readonly panel?: number;
  /**
   * For a variant with windows: A's row `(b·outHeight + oy)·outWidth + ox` is the window of the input at byte address
   * `x` (NHWC) at that output position, taps in the filter's order, read in place; taps in the padding read `zero`
   * (the byte address of {@link windowRun} · `inChannels` zeros). A must have room for the int32 table of
   * `[rows, taps / windowRun]`.
   */
  readonly windows?: { readonly x: number; readonly zero: number; readonly shape: ConvolutionWindows };
}

/**
 * The taps along the width that one table entry of a window covers: all of them where no window reaches the padding
 * at the sides (their inputs then follow each other in memory), else 1.
 */
export function windowRun(w: ConvolutionWindows): number {
  const right = (w.outWidth - 1) * w.strideWidth + w.filterWidth - w.left;
  return w.left === 0 && right <= w.inWidth ? w.filterWidth : 1;
}

/** The window parameters of `call` (ROW0 to RUN). */
function windowArgs(call: ProductCall): readonly number[] {
  if (call.windows === undefined) return NO_WINDOWS;
  const { x, zero, shape: w } = call.windows;
  return [
    0,
    x,
    zero,
    w.inChannels,
    w.inHeight,
    w.inWidth,
    w.outHeight * w.outWidth,
    w.outWidth,
    w.filterHeight,
    w.filterWidth,
    w.strideHeight,
    w.strideWidth,
    w.top,
    w.left,
    windowRun(w),
  ];
}

/**
 * Writes the product `call` describes, its rows in chunks of four shared
 * with the helper thread of simd_routine_threads.ts where both threads may
 * compute, and returns true; returns false without writing where the engine
 * refuses the routine (no WebAssembly SIMD, or no relaxed SIMD for a fused
 * multiply-add) or the memory is not found. The sizes must fit
 * ({@link simdProductFits}). Each element is the same sum as on one thread.
 */
export function matMulSimdOnThreads(memory: WasmMemory | undefined, call: ProductCall): boolean {
  const { rows, depth, cols } = call;
  const panel = call.panel ?? cols;
  const args = [call.a, call.b, call.c, 1, rows, depth, cols, 0, 0, panel, call.bias ?? 0, cols, ...windowArgs(call)];
  const code = productCode(call.variant ?? PLAIN_PRODUCT);
  const noSteps = new Array<number>(PARAMS).fill(0);
  if (panel < cols) {
    // B is larger than a panel: the threads take panels of columns (B read once, A once per panel).
    const bColumn = call.variant?.packedB ? 4 * depth : 4;
    const steps = noSteps.map((_, i) => (i === B ? bColumn : i === C || (i === BIAS && call.bias !== undefined) ? 4 : 0));
    return runSimdRoutine(memory, code, { args, steps, countArg: COLS, units: cols, unitBytes: 4 * (depth + rows) + (4 * rows * depth) / panel, granule: 8 });
  }
  const w = call.windows?.shape;
  const aRow = w === undefined ? depth : (w.filterHeight * w.filterWidth) / windowRun(w);
  const steps = noSteps.map((_, i) => (i === A ? 4 * aRow : i === C ? 4 * cols : i === ROW0 ? 1 : 0));
  // A row of A and of C, and a quarter of B (read once per tile of four rows).
  return runSimdRoutine(memory, code, { args, steps, countArg: ROWS, units: rows, unitBytes: 4 * (depth + cols) + depth * cols, granule: 4 });
}

/** A batch of products of float32 matrices in the wasm heap, for {@link batchMatMulSimdOnThreads}. */
export interface BatchProductCall extends BatchProduct {
  /** Byte addresses of the first A (`[rows, depth]`), B (`[depth, cols]`, or packed: {@link ProductVariant.packedB}) and C (`[batch, rows, cols]`). */
  readonly a: number;
  readonly b: number;
  readonly c: number;
  /** Bytes from one A, and one B, to the next. */
  readonly aStep: number;
  readonly bStep: number;
  /** How the tiles compute (no bias: each product would need its own). */
  readonly variant: ProductVariant & { readonly bias: false; readonly windows: false };
}

/**
 * Writes the batch of products `call` describes, its products shared with
 * the helper thread of simd_routine_threads.ts where both threads may
 * compute, and returns true; returns false without writing where the engine
 * refuses the routine or the memory is not found. The sizes must fit
 * ({@link simdProductFits}).
 */
export function batchMatMulSimdOnThreads(memory: WasmMemory | undefined, call: BatchProductCall): boolean {
  const { batch, rows, depth, cols, aStep, bStep } = call;
  const args = [call.a, call.b, call.c, batch, rows, depth, cols, aStep, bStep, cols, 0, cols, ...NO_WINDOWS];
  const steps = new Array<number>(PARAMS).fill(0).map((_, i) => (i === A ? aStep : i === B ? bStep : i === C ? 4 * rows * cols : 0));
  return runSimdRoutine(memory, productCode(call.variant), { args, steps, countArg: BATCH, units: batch, unitBytes: 4 * (rows * depth + depth * cols + rows * cols) });
}
