/**
 * 3 × 3 convolutions at stride 1 by Winograd's minimal filtering, F(2 × 2,
 * 3 × 3) (Lavin and Gray, "Fast Algorithms for Convolutional Neural
 * Networks", 2016): each 2 × 2 block of outputs (a tile) is computed from the
 * 4 × 4 block of inputs around it with 16 multiplications per input and
 * output channel instead of 36.
 *
 * - The filter `g` (`[3, 3, inChannels, outChannels]`) becomes `U = G g Gᵀ`,
 *   16 matrices `[inChannels, outChannels]`, packed for the product routine
 *   once per filter tensor (packed_filter.ts).
 * - Each tile's input block `d` becomes `V = Bᵀ d B` (a SIMD routine, four
 *   channels at a time): 16 matrices `[tiles, inChannels]`.
 * - The 16 products `M = V · U` are one batch of the product routine of
 *   batch_mat_mul_simd.ts, with fused multiply-adds.
 * - Each tile's outputs are `Aᵀ M A` (a SIMD routine), plus the bias, then
 *   the activation; tiles at the bottom or right edge of an odd-sized output write
 *   only their outputs inside it.
 *
 * The transforms add and subtract, and `G` halves, so the results differ
 * from a direct convolution's by a few units in the last place, as the fused
 * multiply-adds already make them. The transforms and the 16 products are
 * split between the calling thread and the helper of simd_routine_threads.ts.
 */
import type * as tf from '@tensorflow/tfjs';
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';
import { batchMatMulSimdOnThreads, productRoutineReady, type ProductVariant } from './batch_mat_mul_simd.js';
import { filterCopy, type FilterCopyShape, PANEL_COLUMNS, packColumns, packedPanels } from './packed_filter.js';
import { runSimdRoutine } from './simd_routine_threads.js';
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
  type RoutineCode,
  set,
  SimdOp,
  simd,
  simdRoutine,
  type WasmMemory,
  wasmMemory,
  when,
} from './wasm_simd_routine.js';

/** The components of a tile's transforms: 4 × 4. */
const COMPONENTS = 16;

/** The sizes of a convolution that {@link winogradConvolution} computes. */
export interface WinogradShape {
  readonly batch: number;
  readonly inHeight: number;
  readonly inWidth: number;
  readonly inChannels: number;
  readonly outHeight: number;
  readonly outWidth: number;
  readonly outChannels: number;
  /** Padding before, along the height and the width. */
  readonly top: number;
  readonly left: number;
}

/** The tiles of a shape: 2 × 2 outputs each, the last row and column of an odd-sized output half-used. */
function tiles(s: WinogradShape): { high: number; wide: number; count: number } {
  const high = Math.ceil(s.outHeight / 2);
  const wide = Math.ceil(s.outWidth / 2);
  return { high, wide, count: s.batch * high * wide };
}

/** The multiply-adds of the 16 products of a convolution of `shape`: 16 per tile and pair of input and output channels. */
export function winogradMultiplyAdds(shape: WinogradShape): number {
  return COMPONENTS * tiles(shape).count * shape.inChannels * shape.outChannels;
}

/** The copy {@link winogradConvolution} makes of a filter: its 16 transformed components, each packed (`[16, ceil(outChannels / 8) · inChannels · 8]`). */
export function winogradFilterCopy(inChannels: number, outChannels: number): FilterCopyShape {
  return { key: `winograd ${outChannels}`, shape: [COMPONENTS, packedPanels(outChannels) * inChannels * PANEL_COLUMNS] };
}

/**
 * `U = G g Gᵀ` of the filter `[3, 3, inChannels, outChannels]` (row-major
 * `from`), as 16 matrices `[inChannels, outChannels]` packed for the product
 * routine one after the other: component `4i + j` is `U[i][j]`. `G` is
 * `[[1, 0, 0], [½, ½, ½], [½, -½, ½], [0, 0, 1]]`.
 */
export function winogradFilter(from: Float32Array, inChannels: number, outChannels: number, to: Float32Array): void {
  const plane = inChannels * outChannels;
  const u = new Float32Array(COMPONENTS * plane);
  const g = new Float64Array(9);
  const gg = new Float64Array(12);
  for (let e = 0; e < plane; e++) {
    for (let t = 0; t < 9; t++) g[t] = from[t * plane + e]!;
    // G g: 4 × 3.
    for (let c = 0; c < 3; c++) {
      const [a, b, d] = [g[c]!, g[3 + c]!, g[6 + c]!];
      gg[c] = a;
      gg[3 + c] = (a + b + d) / 2;
      gg[6 + c] = (a - b + d) / 2;
      gg[9 + c] = d;
    }
    // (G g) Gᵀ: 4 × 4.
    for (let i = 0; i < 4; i++) {
      const [a, b, d] = [gg[3 * i]!, gg[3 * i + 1]!, gg[3 * i + 2]!];
      u[4 * i * plane + e] = a;
      u[(4 * i + 1) * plane + e] = (a + b + d) / 2;
      u[(4 * i + 2) * plane + e] = (a - b + d) / 2;
      u[(4 * i + 3) * plane + e] = d;
    }
  }
  const packed = packedPanels(outChannels) * inChannels * PANEL_COLUMNS;
  for (let k = 0; k < COMPONENTS; k++) packColumns(u, k * plane, inChannels, outChannels, to, k * packed);
}

// The input transform's parameters: the input (NHWC), V, a row of inChannels zeros, the first tile and the tiles of
// this call, all tiles (V's component stride), the sizes and the padding before.
const X = 0,
  V = 1,
  ZERO = 2,
  TILE0 = 3,
  TILES = 4,
  ALL_TILES = 5,
  CIN = 6,
  IN_H = 7,
  IN_W = 8,
  TILES_H = 9,
  TILES_W = 10,
  PT = 11,
  PL = 12;
const INPUT_PARAMS = 13;
// Its i32 locals: the tile, its image, row and column, the channel's byte offset, the 16 taps' addresses, where the
// tile's row of component 0 is in V, the bytes of a row of channels and of a component.
const T = 13,
  TB = 14,
  TY = 15,
  TX = 16,
  CB = 17,
  TAP0 = 18,
  DST = 34,
  CIN_BYTES = 35,
  COMPONENT_BYTES = 36,
  IY = 37,
  IX = 38;
const INPUT_I32_LOCALS = 39 - INPUT_PARAMS;
// Its v128 locals: Bᵀ applied along a row, u[r][j] of the block's row r.
const U = 39;

const f32x4 = (op: SimdOp.F32x4Add | SimdOp.F32x4Sub, a: number[], b: number[]): number[] => [...a, ...b, ...simd(op)];

/** The tile's image, row and column (to locals `b`, `y`, `x`) from its index in local `t`, of tiles `high` by `wide` (parameters). */
const tilePosition = (t: number, b: number, y: number, x: number, high: number, wide: number): number[] => [
  ...[...get(t), ...get(wide), Op.I32RemU],
  ...set(x),
  ...[...get(t), ...get(wide), Op.I32DivU, ...get(high), Op.I32RemU],
  ...set(y),
  ...[...get(t), ...get(wide), Op.I32DivU, ...get(high), Op.I32DivU],
  ...set(b),
];

/** `Bᵀ d B` of each tile's 4 × 4 input block, four channels at a time, to V (`[16, allTiles, inChannels]`). */
const INPUT_CODE: RoutineCode = (() => {
  // The tap (i, j) of the block: its input's address, or the row of zeros outside the input.
  const tapAddresses = [
    ...add(get(X), bytes(mul(mul(mul(get(TB), get(IN_H)), get(IN_W)), get(CIN)))),
    ...set(DST),
    ...[0, 1, 2, 3].flatMap((i) => [
      ...[...get(TY), ...i32(2), Op.I32Mul, ...get(PT), Op.I32Sub, ...i32(i), Op.I32Add],
      ...set(IY),
      ...[0, 1, 2, 3].flatMap((j) => [
        ...[...get(TX), ...i32(2), Op.I32Mul, ...get(PL), Op.I32Sub, ...i32(j), Op.I32Add],
        ...set(IX),
        ...add(get(DST), bytes(mul(add(mul(get(IY), get(IN_W)), get(IX)), get(CIN)))),
        ...get(ZERO),
        ...[...get(IY), ...get(IN_H), Op.I32LtU, ...get(IX), ...get(IN_W), Op.I32LtU, Op.I32And],
        Op.Select,
        ...set(TAP0 + 4 * i + j),
      ]),
    ]),
  ];
  const d = (i: number, j: number) => [...add(get(TAP0 + 4 * i + j), get(CB)), ...memory(SimdOp.Load)];
  const u = (r: number, j: number) => get(U + 4 * r + j);
  // Along each row r of the block: u[r] = d[r] B, that is (d0 - d2, d1 + d2, d2 - d1, d1 - d3).
  const rows = [0, 1, 2, 3].flatMap((r) => [
    ...f32x4(SimdOp.F32x4Sub, d(r, 0), d(r, 2)),
    ...set(U + 4 * r),
    ...f32x4(SimdOp.F32x4Add, d(r, 1), d(r, 2)),
    ...set(U + 4 * r + 1),
    ...f32x4(SimdOp.F32x4Sub, d(r, 2), d(r, 1)),
    ...set(U + 4 * r + 2),
    ...f32x4(SimdOp.F32x4Sub, d(r, 1), d(r, 3)),
    ...set(U + 4 * r + 3),
  ]);
  // Down each column j: V[i][j] = (Bᵀ u)[i][j], that is (u0 - u2, u1 + u2, u2 - u1, u1 - u3), stored at component 4i + j.
  const store = (i: number, j: number, value: number[]) => [...add(add(get(DST), get(CB)), mul(i32(4 * i + j), get(COMPONENT_BYTES))), ...value, ...memory(SimdOp.Store)];
  const columns = [0, 1, 2, 3].flatMap((j) => [
    ...store(0, j, f32x4(SimdOp.F32x4Sub, u(0, j), u(2, j))),
    ...store(1, j, f32x4(SimdOp.F32x4Add, u(1, j), u(2, j))),
    ...store(2, j, f32x4(SimdOp.F32x4Sub, u(2, j), u(1, j))),
    ...store(3, j, f32x4(SimdOp.F32x4Sub, u(1, j), u(3, j))),
  ]);
  const body = [
    ...bytes(get(CIN)),
    ...set(CIN_BYTES),
    ...mul(get(ALL_TILES), get(CIN_BYTES)),
    ...set(COMPONENT_BYTES),
    ...loop(T, get(TILE0), add(get(TILE0), get(TILES)), i32(1), [
      ...tilePosition(T, TB, TY, TX, TILES_H, TILES_W),
      ...tapAddresses,
      ...add(get(V), mul(get(T), get(CIN_BYTES))),
      ...set(DST),
      ...loop(CB, i32(0), get(CIN_BYTES), i32(16), [...rows, ...columns]),
    ]),
  ];
  return { name: 'winogradInput', params: INPUT_PARAMS, i32Locals: INPUT_I32_LOCALS, v128Locals: 16, body };
})();

// The output transform's parameters: M (`[16, allTiles, outChannels]`), the output (NHWC), the bias (or 0), the first
// tile and the tiles of this call, all tiles, the sizes.
const M = 0,
  OUT = 1,
  BIAS = 2,
  O_TILE0 = 3,
  O_TILES = 4,
  O_ALL_TILES = 5,
  COUT = 6,
  OUT_H = 7,
  OUT_W = 8,
  O_TILES_H = 9,
  O_TILES_W = 10;
const OUTPUT_PARAMS = 11;
// Its i32 locals: the tile, its image, row and column, the channel's byte offset, the tile's row of component 0 in M,
// the address of its top-left output, the bytes of a row of channels, of a component and of an output row, whether
// the tile's right column and bottom row are inside the output.
const O_T = 11,
  O_TB = 12,
  O_TY = 13,
  O_TX = 14,
  O_CB = 15,
  SRC = 16,
  DST00 = 17,
  COUT_BYTES = 18,
  O_COMPONENT_BYTES = 19,
  ROW_BYTES = 20,
  RIGHT = 21,
  BELOW = 22;
const OUTPUT_I32_LOCALS = 23 - OUTPUT_PARAMS;
// Its v128 locals: Aᵀ applied down each column, s[a][j]; the bias.
const S = 23,
  BIAS_V = 31;

/** The output transform's code for a variant: with or without the bias, and its activation. */
function outputCode(bias: boolean, activation: MultiplyAddActivation): RoutineCode {
  const m = (i: number, j: number) => [...add(add(get(SRC), get(O_CB)), mul(i32(4 * i + j), get(O_COMPONENT_BYTES))), ...memory(SimdOp.Load)];
  const s = (a: number, j: number) => get(S + 4 * a + j);
  // Down each column j: s[0][j] = m0 + m1 + m2, s[1][j] = m1 - m2 - m3.
  const columns = [0, 1, 2, 3].flatMap((j) => [
    ...f32x4(SimdOp.F32x4Add, f32x4(SimdOp.F32x4Add, m(0, j), m(1, j)), m(2, j)),
    ...set(S + j),
    ...f32x4(SimdOp.F32x4Sub, f32x4(SimdOp.F32x4Sub, m(1, j), m(2, j)), m(3, j)),
    ...set(S + 4 + j),
  ]);
  const finish = (value: number[]) => [...(bias ? f32x4(SimdOp.F32x4Add, value, get(BIAS_V)) : value), ...activate(activation)];
  // Along each row a: y[a][0] = s0 + s1 + s2, y[a][1] = s1 - s2 - s3, stored where the output has them.
  const store = (a: number, b: number, value: number[]) => [
    ...add(add(get(DST00), get(O_CB)), add(mul(i32(a), get(ROW_BYTES)), mul(i32(b), get(COUT_BYTES)))),
    ...finish(value),
    ...memory(SimdOp.Store),
  ];
  const left = (a: number) => f32x4(SimdOp.F32x4Add, f32x4(SimdOp.F32x4Add, s(a, 0), s(a, 1)), s(a, 2));
  const right = (a: number) => f32x4(SimdOp.F32x4Sub, f32x4(SimdOp.F32x4Sub, s(a, 1), s(a, 2)), s(a, 3));
  const outputs = [
    ...store(0, 0, left(0)),
    ...when(get(RIGHT), store(0, 1, right(0))),
    ...when(get(BELOW), [...store(1, 0, left(1)), ...when(get(RIGHT), store(1, 1, right(1)))]),
  ];
  const body = [
    ...bytes(get(COUT)),
    ...set(COUT_BYTES),
    ...mul(get(O_ALL_TILES), get(COUT_BYTES)),
    ...set(O_COMPONENT_BYTES),
    ...mul(get(OUT_W), get(COUT_BYTES)),
    ...set(ROW_BYTES),
    ...loop(O_T, get(O_TILE0), add(get(O_TILE0), get(O_TILES)), i32(1), [
      ...tilePosition(O_T, O_TB, O_TY, O_TX, O_TILES_H, O_TILES_W),
      ...add(get(M), mul(get(O_T), get(COUT_BYTES))),
      ...set(SRC),
      // The output at (b, 2ty, 2tx).
      ...add(get(OUT), mul(add(mul(add(mul(get(O_TB), get(OUT_H)), mul(get(O_TY), i32(2))), get(OUT_W)), mul(get(O_TX), i32(2))), get(COUT_BYTES))),
      ...set(DST00),
      ...[...get(O_TX), ...i32(2), Op.I32Mul, ...i32(1), Op.I32Add, ...get(OUT_W), Op.I32LtS],
      ...set(RIGHT),
      ...[...get(O_TY), ...i32(2), Op.I32Mul, ...i32(1), Op.I32Add, ...get(OUT_H), Op.I32LtS],
      ...set(BELOW),
      ...loop(O_CB, i32(0), get(COUT_BYTES), i32(16), [...(bias ? [...add(get(BIAS), get(O_CB)), ...memory(SimdOp.Load), ...set(BIAS_V)] : []), ...columns, ...outputs]),
    ]),
  ];
  return { name: 'winogradOutput', params: OUTPUT_PARAMS, i32Locals: OUTPUT_I32_LOCALS, v128Locals: 9, body };
}

const outputCodes = new Map<string, RoutineCode>();

/** The output transform of a variant (one code object per variant: routines are compiled once per code object). */
function outputCodeOf(bias: boolean, activation: MultiplyAddActivation): RoutineCode {
  const key = `${bias},${activation}`;
  let code = outputCodes.get(key);
  if (code === undefined) {
    code = outputCode(bias, activation);
    outputCodes.set(key, code);
  }
  return code;
}

/** The product of the 16 components: fused multiply-adds, U packed, nothing before or after. */
const COMPONENT_PRODUCT = { multiplyAdd: 'fused', bias: false, activation: 'linear', windows: false, packedB: true } as const;

/** Whether the routines run on `memory` (compiled at the first call; the product needs relaxed SIMD). */
function winogradReady(memory: WasmMemory | undefined, variant: ProductVariant): boolean {
  return (
    productRoutineReady(memory, COMPONENT_PRODUCT) &&
    simdRoutine(memory, INPUT_CODE) !== undefined &&
    simdRoutine(memory, outputCodeOf(variant.bias, variant.activation)) !== undefined
  );
}

/**
 * The convolution of `x` (`[batch, inHeight, inWidth, inChannels]`) with the
 * 3 × 3 `filter` at stride 1 (and `bias`, then the activation, as `variant` says), by
 * F(2 × 2, 3 × 3); undefined (nothing left allocated) where the routines
 * cannot run. The channels must be multiples of 4.
 */
export function winogradConvolution(
  wasm: BackendWasm,
  x: tf.TensorInfo,
  filter: tf.TensorInfo,
  bias: tf.TensorInfo | undefined,
  shape: WinogradShape,
  variant: ProductVariant,
): tf.TensorInfo | undefined {
  const memory = wasmMemory(wasm);
  if (!winogradReady(memory, variant)) return undefined;
  const { inChannels, outChannels } = shape;
  const tile = tiles(shape);
  const address = (t: tf.TensorInfo) => wasm.typedArrayFromHeap(t).byteOffset;
  const copy = winogradFilterCopy(inChannels, outChannels);
  const u = filterCopy(wasm, filter, copy.key, () => {
    const out = wasm.makeOutput([...copy.shape], 'float32');
    winogradFilter(wasm.typedArrayFromHeap(filter) as Float32Array, inChannels, outChannels, wasm.typedArrayFromHeap(out) as Float32Array);
    return out;
  });
  const zero = wasm.makeOutput([inChannels], 'float32');
  const v = wasm.makeOutput([COMPONENTS, tile.count, inChannels], 'float32');
  const m = wasm.makeOutput([COMPONENTS, tile.count, outChannels], 'float32');
  const out = wasm.makeOutput([shape.batch, shape.outHeight, shape.outWidth, outChannels], 'float32');
  let done = false;
  try {
    (wasm.typedArrayFromHeap(zero) as Float32Array).fill(0);
    const tileSteps = (params: number, first: number) => new Array<number>(params).fill(0).map((_, i) => (i === first ? 1 : 0));
    runSimdRoutine(memory, INPUT_CODE, {
      args: [address(x), address(v), address(zero), 0, tile.count, tile.count, inChannels, shape.inHeight, shape.inWidth, tile.high, tile.wide, shape.top, shape.left],
      steps: tileSteps(INPUT_PARAMS, TILE0),
      countArg: TILES,
      units: tile.count,
      unitBytes: 4 * COMPONENTS * inChannels * 2,
    });
    batchMatMulSimdOnThreads(memory, {
      a: address(v),
      b: address(u),
      c: address(m),
      batch: COMPONENTS,
      rows: tile.count,
      depth: inChannels,
      cols: outChannels,
      aStep: 4 * tile.count * inChannels,
      bStep: 4 * copy.shape[1]!,
      variant: COMPONENT_PRODUCT,
    });
    runSimdRoutine(memory, outputCodeOf(variant.bias, variant.activation), {
      args: [address(m), address(out), bias ? address(bias) : 0, 0, tile.count, tile.count, outChannels, shape.outHeight, shape.outWidth, tile.high, tile.wide],
      steps: tileSteps(OUTPUT_PARAMS, O_TILE0),
      countArg: O_TILES,
      units: tile.count,
      unitBytes: 4 * (COMPONENTS + 4) * outChannels,
    });
    done = true;
    return out;
  } finally {
    for (const t of [zero, v, m]) wasm.disposeData(t.dataId);
    if (!done) wasm.disposeData(out.dataId);
  }
}
