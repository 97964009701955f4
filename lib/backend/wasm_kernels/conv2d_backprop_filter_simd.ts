/**
 * The filter gradient of a convolution with few filter taps per output
 * channel (a first layer: 3×3 on one or three input channels), as a
 * WebAssembly SIMD routine in the wasm backend's memory.
 *
 * `dW[i, j, ci, co] = Σ_b,oy,ox x[b, oy·sh + i - top, ox·sw + j - left, ci] · dy[b, oy, ox, co]`:
 * for each row of `dy` (kept in the cache while it is read), each tap
 * `(i, j, ci)` and each block of 16 output channels, the routine loads the
 * block's four accumulators from `dW`, adds the row's products (four
 * vectors of `dy` times the tap's input element, splatted), and stores them
 * back; taps in the padding are skipped. Each element of `dW` is summed in
 * `(b, oy, ox)` order. Through XNNPACK the same gradient is a convolution
 * whose filter is `dy`, packed anew at every step (about 5-7 ns per element:
 * 6 ms for a [64, 28, 28, 16] `dy`, of which the arithmetic is 0.3 ms), or
 * a depthwise convolution (2.5 ms); this routine takes 0.75 ms there, on
 * one thread. Its time grows with the taps, XNNPACK's barely: measured on
 * [64, 14, 14, c] inputs and 32 output channels (routine against XNNPACK),
 * 36 taps 1.5 against 3.3-3.9 ms, 72 taps 2.8 against 2.9-4.9 ms, 144 taps
 * 5.7 against 4.4 ms, hence {@link FEW_TAPS}.
 */
import type * as tf from '@tensorflow/tfjs';
import { add, bytes, f32Load, flatIndex, get, i32, loop, memory, mul, Op, type RoutineCode, set, SimdOp, simd, type WasmMemory, when } from './wasm_simd_routine.js';
import { runSimdRoutine } from './simd_routine_threads.js';

/** The most taps (`filterHeight·filterWidth·inChannels`) for which the routine beats XNNPACK's packing of `dy`. */
export const FEW_TAPS = 64;

// Parameters.
const X = 0,
  DY = 1,
  DW = 2,
  BATCH = 3,
  IN_H = 4,
  IN_W = 5,
  CIN = 6,
  OUT_H = 7,
  OUT_W = 8,
  COUT = 9,
  SH = 10,
  SW = 11,
  FH = 12,
  FW = 13,
  PAD_T = 14,
  PAD_L = 15;
// i32 locals.
const I = 16,
  J = 17,
  CI = 18,
  CG = 19,
  B = 20,
  OY = 21,
  OX = 22,
  Y = 23,
  XX = 24,
  X_ROW = 25,
  DYP = 26,
  DWP = 27;
// v128 locals: four accumulators, the tap's input element.
const A0 = 28,
  V = 32;

/** a_k += v · dy[dyp + 4k .. +4] for k = 0..3. */
const accumulate = [0, 1, 2, 3].flatMap((k) => [
  ...get(A0 + k),
  ...get(V),
  ...get(DYP),
  ...memory(SimdOp.Load, 16 * k),
  ...simd(SimdOp.F32x4Mul),
  ...simd(SimdOp.F32x4Add),
  ...set(A0 + k),
]);

const outputColumn = [
  ...when([...get(XX), ...get(IN_W), Op.I32LtU], [...add(get(X_ROW), bytes(mul(get(XX), get(CIN)))), ...f32Load, ...simd(SimdOp.F32x4Splat), ...set(V), ...accumulate]),
  ...add(get(XX), get(SW)),
  ...set(XX),
  ...add(get(DYP), bytes(get(COUT))),
  ...set(DYP),
];

/** One output row's part of one tap and block: a_k = dw[...], the row's sum added, stored back. */
const tapBlock = [
  // dwp = dw + (((i·fw + j)·cin + ci)·cout + cg)·4
  ...add(get(DW), bytes(flatIndex(get(I), [get(FW), get(J)], [get(CIN), get(CI)], [get(COUT), get(CG)]))),
  ...set(DWP),
  ...[0, 1, 2, 3].flatMap((k) => [...get(DWP), ...memory(SimdOp.Load, 16 * k), ...set(A0 + k)]),
  // xRow = x + (((b·inH + y)·inW)·cin + ci)·4; dyp = dy + (((b·outH + oy)·outW)·cout + cg)·4; xx = j - left
  ...add(get(X), bytes(add(mul(mul(add(mul(get(B), get(IN_H)), get(Y)), get(IN_W)), get(CIN)), get(CI)))),
  ...set(X_ROW),
  ...add(get(DY), bytes(add(mul(mul(add(mul(get(B), get(OUT_H)), get(OY)), get(OUT_W)), get(COUT)), get(CG)))),
  ...set(DYP),
  ...get(J),
  ...get(PAD_L),
  Op.I32Sub,
  ...set(XX),
  ...loop(OX, i32(0), get(OUT_W), i32(1), outputColumn),
  ...[0, 1, 2, 3].flatMap((k) => [...get(DWP), ...get(A0 + k), ...memory(SimdOp.Store, 16 * k)]),
];

const filterRow = [
  // y = oy·sh + i - top; rows in the padding add nothing.
  ...mul(get(OY), get(SH)),
  ...get(I),
  Op.I32Add,
  ...get(PAD_T),
  Op.I32Sub,
  ...set(Y),
  ...when([...get(Y), ...get(IN_H), Op.I32LtU], loop(J, i32(0), get(FW), i32(1), loop(CI, i32(0), get(CIN), i32(1), loop(CG, i32(0), get(COUT), i32(16), tapBlock)))),
];

const code: RoutineCode = {
  name: 'conv2dBackpropFilter',
  params: 16,
  i32Locals: 12,
  v128Locals: 5,
  body: loop(B, i32(0), get(BATCH), i32(1), loop(OY, i32(0), get(OUT_H), i32(1), loop(I, i32(0), get(FH), i32(1), filterRow))),
};

/**
 * Writes the filter gradient of the NHWC convolution `info` (no dilation)
 * into `dw` (byte address in `memory`, `[filterHeight, filterWidth,
 * inChannels, outChannels]`, zeros) from `x` and `dy` (byte addresses), and returns
 * true; returns false without writing when the routine does not fit: more
 * than {@link FEW_TAPS} taps, output channels not in sixteens, dilation, or
 * an engine without WebAssembly SIMD or a backend whose memory is not found.
 */
export function conv2dBackpropFilterSimd(memory: WasmMemory | undefined, info: tf.backend_util.Conv2DInfo, x: number, dy: number, dw: number): boolean {
  const { filterHeight, filterWidth, inChannels, outChannels } = info;
  if (filterHeight * filterWidth * inChannels > FEW_TAPS || outChannels % 16 !== 0 || info.dilationHeight !== 1 || info.dilationWidth !== 1) return false;
  // Split along the filter's rows: each element of dW keeps its order of sums.
  const filterRowBytes = 4 * filterWidth * inChannels * outChannels;
  const xBytes = 4 * info.batchSize * info.inHeight * info.inWidth * inChannels;
  const dyBytes = 4 * info.batchSize * info.outHeight * info.outWidth * outChannels;
  return runSimdRoutine(memory, code, {
    args: [
      x,
      dy,
      dw,
      info.batchSize,
      info.inHeight,
      info.inWidth,
      inChannels,
      info.outHeight,
      info.outWidth,
      outChannels,
      info.strideHeight,
      info.strideWidth,
      filterHeight,
      filterWidth,
      info.padInfo.top,
      info.padInfo.left,
    ],
    steps: [0, 0, filterRowBytes, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1, 0],
    countArg: 12,
    units: filterHeight,
    unitBytes: Math.ceil((xBytes + dyBytes) / filterHeight) + filterRowBytes,
  });
}
