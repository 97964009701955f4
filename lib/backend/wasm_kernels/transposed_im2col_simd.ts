/**
 * The transposed im2col of a stride-1 NHWC convolution's input, by a
 * WebAssembly SIMD routine in the wasm backend's memory.
 *
 * `cols[(i·filterWidth + j)·inChannels + ci, (b·outHeight + oy)·outWidth + ox] = x[b, oy + i - top, ox + j - left, ci]`,
 * 0 where that element is in the padding: one row per filter tap, holding
 * the input that tap meets at each output position, so that the filter
 * gradient is the single product `cols · dy` (`dy` as
 * `[positions, outChannels]`). The routine reads `x` transposed to
 * `[inChannels, batch, inHeight, inWidth]`, where each output row of a tap
 * is a shifted run of one input row: it copies that run four elements at a
 * time and writes zeros at its padded ends and for rows in the padding.
 * Rows of `cols` are independent, so a call splits into chunks of them
 * between two threads (simd_routine_threads.ts).
 */
import {
  add,
  bytes,
  copyElements,
  fourThenOne,
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
  when,
  zeros,
  type WasmMemory,
} from './wasm_simd_routine.js';
import { runSimdRoutine } from './simd_routine_threads.js';

/** The sizes of a transposed im2col: the input's and output's extents, the filter's width, the padding before. */
export interface Im2colShape {
  /** The images whose windows are written. */
  readonly batch: number;
  /** The images each channel plane of the transposed input holds (default `batch`): more where the call writes the windows of some of them, from the first of those on. */
  readonly planeImages?: number;
  readonly inChannels: number;
  readonly inHeight: number;
  readonly inWidth: number;
  readonly outHeight: number;
  readonly outWidth: number;
  readonly filterHeight: number;
  readonly filterWidth: number;
  readonly top: number;
  readonly left: number;
}

// Parameters.
const XT = 0,
  COLS = 1,
  ROW0 = 2,
  ROWS = 3,
  CIN = 4,
  BATCH = 5,
  IN_H = 6,
  IN_W = 7,
  OUT_H = 8,
  OUT_W = 9,
  FW = 10,
  PAD_T = 11,
  PAD_L = 12,
  PLANE_IMAGES = 13;
// i32 locals.
const R = 14,
  I = 15,
  J = 16,
  LO = 17,
  HI = 18,
  PLANE = 19,
  B = 20,
  OY = 21,
  Y = 22,
  SRC = 23,
  DST = 24,
  OX = 25,
  END = 26,
  OY0 = 27,
  OY1 = 28,
  FIRST = 29,
  LAST = 30;

/** Elements `from` to `to` of the output row (at `dst`) set to 0: vectors, then single elements. */
const zeroRun = (from: number[], to: number[]): number[] =>
  fourThenOne(OX, END, from, to, [...add(get(DST), bytes(get(OX))), ...zeros, ...memory(SimdOp.Store)], [...add(get(DST), bytes(get(OX))), ...i32(0), Op.I32Store, 2, 0]);

/** Elements `from` to `to` of the output (at `dst`) copied from those at `src`: vectors, then single elements. */
const copyRun = (from: number[], to: number[]): number[] => copyElements(OX, END, from, to, get(DST), get(SRC));

/** One output row of one tap: the input row `y = oy + i - top` shifted, or zeros where `y` is in the padding. */
const outputRow = [
  ...add(get(OY), get(I)),
  ...get(PAD_T),
  Op.I32Sub,
  ...set(Y),
  ...[...get(Y), ...get(IN_H), Op.I32LtU, Op.If, 0x40],
  // src = plane + ((b·inH + y)·inW + j - left)·4, so that src + ox·4 is the input element of column ox.
  ...add(get(PLANE), bytes(add(mul(add(mul(get(B), get(IN_H)), get(Y)), get(IN_W)), [...get(J), ...get(PAD_L), Op.I32Sub]))),
  ...set(SRC),
  ...zeroRun(i32(0), get(LO)),
  ...copyRun(get(LO), get(HI)),
  ...zeroRun(get(HI), get(OUT_W)),
  Op.Else,
  ...zeroRun(i32(0), get(OUT_W)),
  Op.End,
  ...add(get(DST), bytes(get(OUT_W))),
  ...set(DST),
];

/**
 * Where the output rows are as wide as the input's (same padding), an
 * image's part of a tap's row is one shifted run of the image's plane:
 * output element `e = oy·outW + ox` reads input element
 * `e + (i - top)·inW + (j - left)`. It is copied from the first element
 * read inside the input (row oy0, column lo) to the last (row oy1 - 1,
 * column hi - 1); the elements before and after, and the gaps between one
 * row's column hi and the next row's column lo (elements read from the
 * neighbouring input row), are set to 0.
 */
const wholeImages = [
  ...pick(pick([...get(PAD_T), ...get(I), Op.I32Sub], i32(0), Op.I32GtS), get(OUT_H), Op.I32LtS),
  ...set(OY0),
  ...pick(pick([...get(IN_H), ...get(PAD_T), Op.I32Add, ...get(I), Op.I32Sub], get(OY0), Op.I32GtS), get(OUT_H), Op.I32LtS),
  ...set(OY1),
  // first = oy0·outW + lo, last = (oy1 - 1)·outW + hi, or both 0 where nothing is read.
  ...add(mul(get(OY0), get(OUT_W)), get(LO)),
  ...set(FIRST),
  ...add(mul([...get(OY1), ...i32(1), Op.I32Sub], get(OUT_W)), get(HI)),
  ...set(LAST),
  ...when([...get(OY1), ...get(OY0), Op.I32Sub, ...get(HI), ...get(LO), Op.I32Sub, Op.I32Mul, Op.I32Eqz], [...i32(0), ...set(FIRST), ...i32(0), ...set(LAST)]),
  ...loop(B, i32(0), get(BATCH), i32(1), [
    // src = plane + (b·inH·inW + (i - top)·inW + j - left)·4
    ...add(get(PLANE), bytes(add(mul(add(mul(get(B), get(IN_H)), [...get(I), ...get(PAD_T), Op.I32Sub]), get(IN_W)), [...get(J), ...get(PAD_L), Op.I32Sub]))),
    ...set(SRC),
    ...zeroRun(i32(0), get(FIRST)),
    ...copyRun(get(FIRST), get(LAST)),
    ...zeroRun(get(LAST), mul(get(OUT_H), get(OUT_W))),
    ...loop(OY, get(OY0), [...get(OY1), ...i32(1), Op.I32Sub], i32(1), zeroRun(add(mul(get(OY), get(OUT_W)), get(HI)), add(mul(add(get(OY), i32(1)), get(OUT_W)), get(LO)))),
    ...add(get(DST), bytes(mul(get(OUT_H), get(OUT_W)))),
    ...set(DST),
  ]),
];

/** One row of cols: tap (i, j) of input channel ci, for r = (i·fw + j)·cin + ci. */
const tapRow = [
  ...[...get(R), ...get(CIN), Op.I32DivU],
  ...set(J),
  ...[...get(J), ...get(FW), Op.I32DivU],
  ...set(I),
  // plane = xt + ci·planeImages·inH·inW·4
  ...add(get(XT), bytes(mul(mul(mul([...get(R), ...get(CIN), Op.I32RemU], get(PLANE_IMAGES)), get(IN_H)), get(IN_W)))),
  ...set(PLANE),
  ...[...get(J), ...get(FW), Op.I32RemU],
  ...set(J),
  // Output columns lo..hi read input columns inside the row: lo = clamp(left - j, 0, outW), hi = clamp(inW + left - j, lo, outW).
  ...pick(pick([...get(PAD_L), ...get(J), Op.I32Sub], i32(0), Op.I32GtS), get(OUT_W), Op.I32LtS),
  ...set(LO),
  ...pick(pick([...get(IN_W), ...get(PAD_L), Op.I32Add, ...get(J), Op.I32Sub], get(LO), Op.I32GtS), get(OUT_W), Op.I32LtS),
  ...set(HI),
  ...[...get(OUT_W), ...get(IN_W), Op.I32Eq, Op.If, 0x40],
  ...wholeImages,
  Op.Else,
  ...loop(B, i32(0), get(BATCH), i32(1), loop(OY, i32(0), get(OUT_H), i32(1), outputRow)),
  Op.End,
];

const code: RoutineCode = {
  name: 'transposedIm2col',
  params: 14,
  i32Locals: 17,
  v128Locals: 0,
  body: [...get(COLS), ...set(DST), ...loop(R, get(ROW0), add(get(ROW0), get(ROWS)), i32(1), tapRow)],
};

/**
 * Writes the transposed im2col of `shape` to `cols` (byte address,
 * `[filterHeight·filterWidth·inChannels, batch·outHeight·outWidth]`) from
 * `xt` (byte address, the input as `[inChannels, planeImages, inHeight, inWidth]`:
 * the batch's first image in the first plane at `xt`) and returns true; returns false without writing where the engine has no
 * WebAssembly SIMD or the memory is not found.
 */
export function transposedIm2colSimd(memory: WasmMemory | undefined, xt: number, cols: number, shape: Im2colShape): boolean {
  const rows = shape.filterHeight * shape.filterWidth * shape.inChannels;
  const rowBytes = 4 * shape.batch * shape.outHeight * shape.outWidth;
  return runSimdRoutine(memory, code, {
    args: [
      xt,
      cols,
      0,
      rows,
      shape.inChannels,
      shape.batch,
      shape.inHeight,
      shape.inWidth,
      shape.outHeight,
      shape.outWidth,
      shape.filterWidth,
      shape.top,
      shape.left,
      shape.planeImages ?? shape.batch,
    ],
    steps: [0, rowBytes, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
    countArg: ROWS,
    units: rows,
    unitBytes: 2 * rowBytes,
  });
}
