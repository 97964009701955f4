/**
 * The forward 3 × 3 depthwise convolution of NHWC float32 tensors (one
 * filter per channel), with its bias and activation, as a WebAssembly SIMD
 * routine in the wasm backend's memory.
 *
 * For each output position the routine finds where its nine taps meet the
 * input (a row of zeros for taps in the padding), then, sixteen channels at
 * a time (four vectors, each its own chain of fused multiply-adds, so that
 * one's latency hides behind the others'; then four channels at a time),
 * starts from the bias, adds the nine taps times their filter values in
 * row-major tap order with relaxed SIMD's fused multiply-add, and applies
 * the activation. Output rows of the image are independent, so a call
 * splits into chunks of them between two threads (simd_routine_threads.ts),
 * as XNNPACK's depthwise convolution spreads over its pool, which a graph
 * of poptfjs's routines keeps off (wasm_thread_pool.ts).
 */
import type * as tf from '@tensorflow/tfjs';
import type { MultiplyAddActivation } from '../multiply_add_attribute.js';
import { runSimdRoutine } from './simd_routine_threads.js';
import { activate, add, bytes, get, i32, loop, memory, mul, Op, type RoutineCode, set, SimdOp, simd, type WasmMemory, zeros } from './wasm_simd_routine.js';

// Parameters (i32), in the order of the call in depthwiseConv2dSimd.
const X = 0,
  W = 1,
  BIAS = 2,
  OUT = 3,
  ZERO = 4,
  ROW0 = 5,
  ROWS = 6,
  IN_H = 7,
  IN_W = 8,
  CH = 9,
  OUT_H = 10,
  OUT_W = 11,
  SH = 12,
  SW = 13,
  PT = 14,
  PL = 15;
const PARAMS = 16;
// i32 locals: the output row, its image and row, the output column, the channel's byte offset, the bytes of a row of
// channels, where the output goes, the image's first byte, the window's first row and column, where the vectors of
// sixteen channels end, the nine taps' addresses, the nine taps' filter rows.
const R = 16,
  B = 17,
  OY = 18,
  OX = 19,
  E = 20,
  CH_BYTES = 21,
  DST = 22,
  IMAGE = 23,
  IY0 = 24,
  IX0 = 25,
  E16 = 26,
  TAP0 = 27,
  FILTER0 = 36;
const I32_LOCALS = 45 - PARAMS;
// v128 locals: the sums of up to four vectors of channels.
const SUM = 45;
const VECTORS = 4;

/** The nine taps (i, j) of a 3 × 3 window, in row-major order. */
const TAPS = [0, 1, 2].flatMap((i) => [0, 1, 2].map((j) => [i, j] as const));

/** The routine of a variant: with or without the bias, and its activation. */
function depthwiseCode(bias: boolean, activation: MultiplyAddActivation): RoutineCode {
  // Where tap (i, j) of the window at (OY, OX) meets the input, or the row of zeros outside it.
  const tapAddresses = TAPS.flatMap(([i, j], t) => [
    ...add(get(IMAGE), mul(add(mul(add(get(IY0), i32(i)), get(IN_W)), add(get(IX0), i32(j))), get(CH_BYTES))),
    ...get(ZERO),
    ...[...add(get(IY0), i32(i)), ...get(IN_H), Op.I32LtU, ...add(get(IX0), i32(j)), ...get(IN_W), Op.I32LtU, Op.I32And],
    Op.Select,
    ...set(TAP0 + t),
  ]);
  // `vectors` vectors of channels from byte E: bias, nine fused multiply-adds each (the chains interleaved), activation, store.
  const channels = (vectors: number): number[] => {
    const each = (f: (v: number) => number[]) => Array.from({ length: vectors }, (_, v) => f(v)).flat();
    return [
      ...each((v) => [...(bias ? [...add(get(BIAS), get(E)), ...memory(SimdOp.Load, 16 * v)] : zeros), ...set(SUM + v)]),
      ...TAPS.flatMap((_, t) =>
        each((v) => [
          ...[...add(get(TAP0 + t), get(E)), ...memory(SimdOp.Load, 16 * v)],
          ...[...add(get(FILTER0 + t), get(E)), ...memory(SimdOp.Load, 16 * v)],
          ...get(SUM + v),
          ...simd(SimdOp.F32x4RelaxedMadd),
          ...set(SUM + v),
        ]),
      ),
      ...each((v) => [...add(get(DST), get(E)), ...get(SUM + v), ...activate(activation), ...memory(SimdOp.Store, 16 * v)]),
    ];
  };
  const outputColumn = [
    ...[...get(OX), ...get(SW), Op.I32Mul, ...get(PL), Op.I32Sub],
    ...set(IX0),
    ...tapAddresses,
    ...loop(E, i32(0), get(E16), i32(16 * VECTORS), channels(VECTORS)),
    ...loop(E, get(E16), get(CH_BYTES), i32(16), channels(1)),
    ...add(get(DST), get(CH_BYTES)),
    ...set(DST),
  ];
  const outputRow = [
    ...[...get(R), ...get(OUT_H), Op.I32DivU],
    ...set(B),
    ...[...get(R), ...get(OUT_H), Op.I32RemU],
    ...set(OY),
    ...[...get(OY), ...get(SH), Op.I32Mul, ...get(PT), Op.I32Sub],
    ...set(IY0),
    ...add(get(X), mul(mul(mul(get(B), get(IN_H)), get(IN_W)), get(CH_BYTES))),
    ...set(IMAGE),
    ...loop(OX, i32(0), get(OUT_W), i32(1), outputColumn),
  ];
  const body = [
    ...bytes(get(CH)),
    ...set(CH_BYTES),
    ...[...get(CH_BYTES), ...i32(-16 * VECTORS), Op.I32And],
    ...set(E16),
    ...TAPS.flatMap((_, t) => [...add(get(W), mul(i32(t), get(CH_BYTES))), ...set(FILTER0 + t)]),
    ...get(OUT),
    ...set(DST),
    ...loop(R, get(ROW0), add(get(ROW0), get(ROWS)), i32(1), outputRow),
  ];
  return { name: 'depthwiseConv2d', params: PARAMS, i32Locals: I32_LOCALS, v128Locals: VECTORS, body };
}

const codes = new Map<string, RoutineCode>();

/** The routine of a variant (one code object per variant: routines are compiled once per code object). */
function codeOf(bias: boolean, activation: MultiplyAddActivation): RoutineCode {
  const key = `${bias},${activation}`;
  let code = codes.get(key);
  if (code === undefined) {
    code = depthwiseCode(bias, activation);
    codes.set(key, code);
  }
  return code;
}

/** Whether the routine computes `info`'s depthwise convolution: a 3 × 3 filter, one per channel, channels in fours, no dilation. */
export function depthwiseConv2dSimdFits(info: tf.backend_util.Conv2DInfo): boolean {
  return (
    info.filterHeight === 3 &&
    info.filterWidth === 3 &&
    info.outChannels === info.inChannels &&
    info.inChannels % 4 === 0 &&
    info.dilationHeight === 1 &&
    info.dilationWidth === 1
  );
}

/** Byte addresses of a depthwise convolution's tensors in the wasm heap. */
export interface DepthwiseAddresses {
  /** The input, NHWC. */
  readonly x: number;
  /** The filter, `[3, 3, channels, 1]`. */
  readonly filter: number;
  /** The bias (`[channels]`), if any. */
  readonly bias?: number;
  /** A row of `channels` zeros, read for taps in the padding. */
  readonly zero: number;
  /** The output, `[batch, outHeight, outWidth, channels]`. */
  readonly out: number;
}

/**
 * Writes the depthwise convolution of `info` (which must fit,
 * {@link depthwiseConv2dSimdFits}), plus the bias, then `activation`, and
 * returns true; returns false without writing where the engine refuses
 * relaxed SIMD or the memory is not found. The sums use fused multiply-adds,
 * so they differ from XNNPACK's in the last bits.
 */
export function depthwiseConv2dSimd(memory: WasmMemory | undefined, info: tf.backend_util.Conv2DInfo, at: DepthwiseAddresses, activation: MultiplyAddActivation): boolean {
  const rowBytes = 4 * info.outWidth * info.inChannels;
  const rows = info.batchSize * info.outHeight;
  const args = [
    at.x,
    at.filter,
    at.bias ?? 0,
    at.out,
    at.zero,
    0,
    rows,
    info.inHeight,
    info.inWidth,
    info.inChannels,
    info.outHeight,
    info.outWidth,
    info.strideHeight,
    info.strideWidth,
    info.padInfo.top,
    info.padInfo.left,
  ];
  const steps = args.map((_, i) => (i === OUT ? rowBytes : i === ROW0 ? 1 : 0));
  // A row of outputs reads its nine taps: about 9 / strideWidth times what it writes.
  const unitBytes = rowBytes * (1 + 9 / info.strideWidth);
  return runSimdRoutine(memory, codeOf(at.bias !== undefined, activation), { args, steps, countArg: ROWS, units: rows, unitBytes });
}
