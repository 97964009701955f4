/**
 * The forward max pooling of NHWC float32 tensors, as a WebAssembly SIMD
 * routine in the wasm backend's memory.
 *
 * Each window's output starts at -∞ and is compared with each of its taps
 * inside the input in row-major window order, four channels at a time
 * (`f32x4.gt`, then `v128.bitselect`): the cpu kernel's comparison, so a NaN
 * never wins. Output rows of the image (b, oy) are independent, so a call
 * splits into chunks of them between two threads
 * (simd_routine_threads.ts): XNNPACK's pooling needs its own pool for that,
 * which a graph of poptfjs's routines keeps off (wasm_thread_pool.ts).
 */
import type * as tf from '@tensorflow/tfjs';
import { add, bytes, flatIndex, get, i32, loop, memory, minusInfinities, Op, type RoutineCode, set, SimdOp, simd, type WasmMemory, windowSpan } from './wasm_simd_routine.js';
import { runSimdRoutine } from './simd_routine_threads.js';

// Parameters (i32), in the order of the call in maxPoolSimd.
const X = 0,
  OUT = 1,
  ROW0 = 2,
  ROWS = 3,
  IN_H = 4,
  IN_W = 5,
  CH = 6,
  OUT_H = 7,
  OUT_W = 8,
  SH = 9,
  SW = 10,
  FH = 11,
  FW = 12,
  PAD_T = 13,
  PAD_L = 14;
const PARAMS = 15;
// i32 locals.
const R = 15,
  B = 16,
  OY = 17,
  OX = 18,
  E = 19,
  Y = 20,
  XX = 21,
  Y0 = 22,
  Y1 = 23,
  X0 = 24,
  X1 = 25,
  TOP = 26,
  LEFT = 27,
  DST = 28,
  SRC = 29,
  ROW_BYTES = 30;
const I32_LOCALS = 16;
// v128 locals: a tap's value, the largest so far.
const V = 31,
  BEST = 32;
const V128_LOCALS = 2;

/** The window's largest values so far (at DST) against the tap (y, xx), four channels at a time: best = x > best ? x : best. */
const tap = [
  ...add(get(X), bytes(flatIndex(get(B), [get(IN_H), get(Y)], [get(IN_W), get(XX)], [get(CH), i32(0)]))),
  ...set(SRC),
  ...loop(E, i32(0), get(ROW_BYTES), i32(16), [
    ...add(get(SRC), get(E)),
    ...memory(SimdOp.Load),
    ...set(V),
    ...add(get(DST), get(E)),
    ...memory(SimdOp.Load),
    ...set(BEST),
    ...add(get(DST), get(E)),
    ...get(V),
    ...get(BEST),
    ...get(V),
    ...get(BEST),
    ...simd(SimdOp.F32x4Gt),
    ...simd(SimdOp.Bitselect),
    ...memory(SimdOp.Store),
  ]),
];

/** The window's channels at DST, from -∞ over its taps inside the input in row-major order. */
const window = [
  ...loop(E, i32(0), get(ROW_BYTES), i32(16), [...add(get(DST), get(E)), ...minusInfinities, ...memory(SimdOp.Store)]),
  ...loop(Y, get(Y0), get(Y1), i32(1), loop(XX, get(X0), get(X1), i32(1), tap)),
  ...add(get(DST), get(ROW_BYTES)),
  ...set(DST),
];

const windowColumn = [...windowSpan(OX, SW, PAD_L, FW, IN_W, LEFT, X0, X1), ...window];

/** The windows of output row r = b·outH + oy. */
const outputRow = [
  ...[...get(R), ...get(OUT_H), Op.I32DivU],
  ...set(B),
  ...[...get(R), ...get(OUT_H), Op.I32RemU],
  ...set(OY),
  ...windowSpan(OY, SH, PAD_T, FH, IN_H, TOP, Y0, Y1),
  ...loop(OX, i32(0), get(OUT_W), i32(1), windowColumn),
];

const code: RoutineCode = {
  name: 'maxPool',
  params: PARAMS,
  i32Locals: I32_LOCALS,
  v128Locals: V128_LOCALS,
  body: [...bytes(get(CH)), ...set(ROW_BYTES), ...get(OUT), ...set(DST), ...loop(R, get(ROW0), add(get(ROW0), get(ROWS)), i32(1), outputRow)],
};

/** Whether the routine pools `info`'s windows: channels in fours, no dilation. */
export function maxPoolSimdFits(info: tf.backend_util.Conv2DInfo): boolean {
  return info.inChannels % 4 === 0 && info.dilationHeight === 1 && info.dilationWidth === 1;
}

/**
 * Writes the max pooling of `info`'s windows of the input at byte address
 * `x` to `out` (byte address, `[batch, outHeight, outWidth, channels]`) and
 * returns true; returns false without writing where the engine has no
 * WebAssembly SIMD or the memory is not found. The windows must fit
 * ({@link maxPoolSimdFits}).
 */
export function maxPoolSimd(memory: WasmMemory | undefined, info: tf.backend_util.Conv2DInfo, x: number, out: number): boolean {
  const rowBytes = 4 * info.outWidth * info.inChannels;
  const args = [
    x,
    out,
    0,
    info.batchSize * info.outHeight,
    info.inHeight,
    info.inWidth,
    info.inChannels,
    info.outHeight,
    info.outWidth,
    info.strideHeight,
    info.strideWidth,
    info.filterHeight,
    info.filterWidth,
    info.padInfo.top,
    info.padInfo.left,
  ];
  const steps = args.map((_, i) => (i === OUT ? rowBytes : i === ROW0 ? 1 : 0));
  // A row of windows reads each tap of its windows: about filterHeight · filterWidth / strideWidth times what it writes.
  const unitBytes = rowBytes * (1 + (info.filterHeight * info.filterWidth) / info.strideWidth);
  return runSimdRoutine(memory, code, { args, steps, countArg: ROWS, units: info.batchSize * info.outHeight, unitBytes });
}
