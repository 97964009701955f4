/**
 * The max-pooling gradient of windows that do not overlap, as a small
 * WebAssembly SIMD routine working in the wasm backend's own memory.
 *
 * A JavaScript loop spends most of its time on mispredicted branches (each
 * tap may or may not be the largest so far): about 3 ms for a small CNN's
 * [64, 28, 28, 16] pooling. This routine compares four channels at a time
 * without branches: per window and group of four channels it keeps the
 * largest value so far and the offset of its tap (`f32x4.gt`, then
 * `v128.bitselect` of both), visiting the taps in row-major window order,
 * and then writes each tap of the window: `dy + 0` where the tap won, zero
 * elsewhere. The comparison is the cpu kernel's (`value > largest`,
 * starting from -∞), so NaN never wins and ties go to the first tap.
 *
 * Where the engine has no WebAssembly SIMD, {@link maxPoolGradSimd}
 * reports that it cannot run and the caller keeps its own loop.
 */
import type * as tf from '@tensorflow/tfjs';
import {
  add,
  bytes,
  flatIndex,
  get,
  i32,
  loop,
  memory,
  minusInfinities,
  Op,
  type RoutineCode,
  set,
  SimdOp,
  simd,
  type WasmMemory,
  windowSpan,
  zeros,
} from './wasm_simd_routine.js';
import { runSimdRoutine } from './simd_routine_threads.js';

// Parameters (i32), in the order of the call in maxPoolGradSimd.
const X = 0,
  DY = 1,
  DX = 2,
  BATCH = 3,
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
const B = 15,
  OY = 16,
  OX = 17,
  C = 18,
  Y = 19,
  XX = 20,
  Y0 = 21,
  Y1 = 22,
  X0 = 23,
  X1 = 24,
  P = 25,
  TOP = 26,
  LEFT = 27;
const I32_LOCALS = 13;
// v128 locals: the largest value so far, the offset of its tap, dy + 0.
const BEST = 28,
  WIN = 29,
  G = 30;
const V128_LOCALS = 3;

/** P = (((b·inHeight + y)·inWidth + xx)·channels + c)·4: the byte offset of four channels of a tap. */
const tapOffset = [...bytes(flatIndex(get(B), [get(IN_H), get(Y)], [get(IN_W), get(XX)], [get(CH), get(C)])), ...set(P)];

/** Visits the window's taps in row-major order. */
const taps = (body: number[]) => loop(Y, get(Y0), get(Y1), i32(1), loop(XX, get(X0), get(X1), i32(1), [...tapOffset, ...body]));

const findWinner = taps([
  // m = x[P] > best; best = m ? x[P] : best; win = m ? P : win
  ...get(X),
  ...get(P),
  Op.I32Add,
  ...memory(SimdOp.Load),
  ...get(BEST),
  ...simd(SimdOp.F32x4Gt),
  ...set(G),
  ...get(X),
  ...get(P),
  Op.I32Add,
  ...memory(SimdOp.Load),
  ...get(BEST),
  ...get(G),
  ...simd(SimdOp.Bitselect),
  ...set(BEST),
  ...get(P),
  ...simd(SimdOp.I32x4Splat),
  ...get(WIN),
  ...get(G),
  ...simd(SimdOp.Bitselect),
  ...set(WIN),
]);

const writeTaps = taps([
  // dx[P] = (P == win) & g
  ...get(DX),
  ...get(P),
  Op.I32Add,
  ...get(P),
  ...simd(SimdOp.I32x4Splat),
  ...get(WIN),
  ...simd(SimdOp.I32x4Eq),
  ...get(G),
  ...simd(SimdOp.And),
  ...memory(SimdOp.Store),
]);

const channelGroup = [
  ...minusInfinities,
  ...set(BEST),
  ...i32(-1),
  ...simd(SimdOp.I32x4Splat),
  ...set(WIN),
  ...findWinner,
  // g = dy[((b·outHeight + oy)·outWidth + ox)·channels + c] + 0
  ...add(get(DY), bytes(flatIndex(get(B), [get(OUT_H), get(OY)], [get(OUT_W), get(OX)], [get(CH), get(C)]))),
  ...memory(SimdOp.Load),
  ...zeros,
  ...simd(SimdOp.F32x4Add),
  ...set(G),
  ...writeTaps,
];

const windowColumn = [...windowSpan(OX, SW, PAD_L, FW, IN_W, LEFT, X0, X1), ...loop(C, i32(0), get(CH), i32(4), channelGroup)];

const windowRow = [...windowSpan(OY, SH, PAD_T, FH, IN_H, TOP, Y0, Y1), ...loop(OX, i32(0), get(OUT_W), i32(1), windowColumn)];

const body = loop(B, i32(0), get(BATCH), i32(1), loop(OY, i32(0), get(OUT_H), i32(1), windowRow));

const code: RoutineCode = { name: 'maxPoolGrad', params: PARAMS, i32Locals: I32_LOCALS, v128Locals: V128_LOCALS, body };

/**
 * Writes the max-pooling gradient of `info`'s windows into `dx` (byte
 * address in `memory`, the input's shape, already zero where no window
 * reads), from the input `x` and `dy` (byte addresses), and returns true;
 * returns false without writing when it cannot: windows that overlap
 * (filter larger than the stride), a channel count that is not a multiple
 * of 4, or an engine without WebAssembly SIMD or a backend whose memory is
 * not found.
 */
export function maxPoolGradSimd(memory: WasmMemory | undefined, info: tf.backend_util.Conv2DInfo, x: number, dy: number, dx: number): boolean {
  const { filterHeight, filterWidth, strideHeight, strideWidth, inChannels } = info;
  if (filterHeight > strideHeight || filterWidth > strideWidth || inChannels % 4 !== 0) return false;
  const image = (height: number, width: number) => 4 * height * width * inChannels;
  const [xImage, dyImage] = [image(info.inHeight, info.inWidth), image(info.outHeight, info.outWidth)];
  return runSimdRoutine(memory, code, {
    args: [
      x,
      dy,
      dx,
      info.batchSize,
      info.inHeight,
      info.inWidth,
      inChannels,
      info.outHeight,
      info.outWidth,
      strideHeight,
      strideWidth,
      filterHeight,
      filterWidth,
      info.padInfo.top,
      info.padInfo.left,
    ],
    steps: [xImage, dyImage, xImage, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
    countArg: 3,
    units: info.batchSize,
    unitBytes: 2 * xImage + dyImage,
  });
}
