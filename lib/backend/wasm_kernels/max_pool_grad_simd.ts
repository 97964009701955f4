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
 * The module is built here byte by byte (a type, the memory import, one
 * function) and instantiated on the backend's WebAssembly memory, shared
 * or not; it is compiled once per memory. Where the engine has no SIMD or
 * the memory cannot be imported, {@link maxPoolGradSimd} reports that it
 * cannot run and the caller keeps its own loop.
 */
import type * as tf from '@tensorflow/tfjs';

/** Writes the gradient; byte addresses and sizes as in {@link maxPoolGradSimd}. */
type GradientRoutine = (
  x: number,
  dy: number,
  dx: number,
  batch: number,
  inHeight: number,
  inWidth: number,
  channels: number,
  outHeight: number,
  outWidth: number,
  strideHeight: number,
  strideWidth: number,
  filterHeight: number,
  filterWidth: number,
  padTop: number,
  padLeft: number,
) => void;

/** A WebAssembly memory (the WebAssembly API is not in this project's type libraries). */
export interface WasmMemory {
  /** Its bytes (a `SharedArrayBuffer` for a shared memory). */
  readonly buffer: ArrayBufferLike;
}

/** The parts of the WebAssembly API used here. */
interface WebAssemblyApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { readonly exports: Record<string, unknown> };
}

const webAssembly = (globalThis as unknown as { WebAssembly: WebAssemblyApi }).WebAssembly;

/** WebAssembly opcodes used below. */
enum Op {
  Block = 0x02,
  Loop = 0x03,
  Br = 0x0c,
  BrIf = 0x0d,
  End = 0x0b,
  Select = 0x1b,
  LocalGet = 0x20,
  LocalSet = 0x21,
  I32Const = 0x41,
  F32Const = 0x43,
  I32LtS = 0x48,
  I32GtS = 0x4a,
  I32GeS = 0x4e,
  I32Add = 0x6a,
  I32Sub = 0x6b,
  I32Mul = 0x6c,
  I32Shl = 0x74,
  SimdPrefix = 0xfd,
}

/** SIMD opcodes (after {@link Op.SimdPrefix}, as unsigned LEB128). */
enum SimdOp {
  Load = 0x00,
  Store = 0x0b,
  I32x4Splat = 0x11,
  F32x4Splat = 0x13,
  I32x4Eq = 0x37,
  F32x4Gt = 0x44,
  And = 0x4e,
  Bitselect = 0x52,
  F32x4Add = 0xe4,
}

function unsignedLeb(value: number): number[] {
  const bytes: number[] = [];
  do {
    let byte = value & 0x7f;
    value >>>= 7;
    if (value !== 0) byte |= 0x80;
    bytes.push(byte);
  } while (value !== 0);
  return bytes;
}

function signedLeb(value: number): number[] {
  const bytes: number[] = [];
  for (;;) {
    const byte = value & 0x7f;
    value >>= 7;
    if ((value === 0 && (byte & 0x40) === 0) || (value === -1 && (byte & 0x40) !== 0)) {
      bytes.push(byte);
      return bytes;
    }
    bytes.push(byte | 0x80);
  }
}

/** A section: its id, then its contents' length and contents. */
function section(id: number, contents: number[]): number[] {
  return [id, ...unsignedLeb(contents.length), ...contents];
}

function text(s: string): number[] {
  return [...unsignedLeb(s.length), ...new TextEncoder().encode(s)];
}

// Parameters (i32), in the order of GradientRoutine.
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

const get = (i: number) => [Op.LocalGet, i];
const set = (i: number) => [Op.LocalSet, i];
const i32 = (n: number) => [Op.I32Const, ...signedLeb(n)];
const simd = (op: SimdOp) => [Op.SimdPrefix, ...unsignedLeb(op)];
/** A v128 load or store with 4-byte alignment and no offset. */
const memory = (op: SimdOp.Load | SimdOp.Store) => [...simd(op), 2, 0];
/** `a < b ? a : b` or `a > b ? a : b` of two instruction sequences leaving an i32 each. */
const pick = (a: number[], b: number[], compare: Op.I32LtS | Op.I32GtS) => [...a, ...b, ...a, ...b, compare, Op.Select];

/** `for (i = from; i < to; i += step) body`. */
function loop(i: number, from: number[], to: number[], step: number[], body: number[]): number[] {
  return [
    ...from,
    ...set(i),
    Op.Block,
    0x40,
    Op.Loop,
    0x40,
    ...get(i),
    ...to,
    Op.I32GeS,
    Op.BrIf,
    1,
    ...body,
    ...get(i),
    ...step,
    Op.I32Add,
    ...set(i),
    Op.Br,
    0,
    Op.End,
    Op.End,
  ];
}

/** P = (((b·inHeight + y)·inWidth + xx)·channels + c)·4: the byte offset of four channels of a tap. */
const tapOffset = [
  ...get(B),
  ...get(IN_H),
  Op.I32Mul,
  ...get(Y),
  Op.I32Add,
  ...get(IN_W),
  Op.I32Mul,
  ...get(XX),
  Op.I32Add,
  ...get(CH),
  Op.I32Mul,
  ...get(C),
  Op.I32Add,
  ...i32(2),
  Op.I32Shl,
  ...set(P),
];

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
  ...[Op.F32Const, 0x00, 0x00, 0x80, 0xff],
  ...simd(SimdOp.F32x4Splat),
  ...set(BEST),
  ...i32(-1),
  ...simd(SimdOp.I32x4Splat),
  ...set(WIN),
  ...findWinner,
  // g = dy[((b·outHeight + oy)·outWidth + ox)·channels + c] + 0
  ...get(DY),
  ...get(B),
  ...get(OUT_H),
  Op.I32Mul,
  ...get(OY),
  Op.I32Add,
  ...get(OUT_W),
  Op.I32Mul,
  ...get(OX),
  Op.I32Add,
  ...get(CH),
  Op.I32Mul,
  ...get(C),
  Op.I32Add,
  ...i32(2),
  Op.I32Shl,
  Op.I32Add,
  ...memory(SimdOp.Load),
  ...[Op.F32Const, 0, 0, 0, 0],
  ...simd(SimdOp.F32x4Splat),
  ...simd(SimdOp.F32x4Add),
  ...set(G),
  ...writeTaps,
];

const windowColumn = [
  ...get(OX),
  ...get(SW),
  Op.I32Mul,
  ...get(PAD_L),
  Op.I32Sub,
  ...set(LEFT),
  ...pick(get(LEFT), i32(0), Op.I32GtS),
  ...set(X0),
  ...pick([...get(LEFT), ...get(FW), Op.I32Add], get(IN_W), Op.I32LtS),
  ...set(X1),
  ...loop(C, i32(0), get(CH), i32(4), channelGroup),
];

const windowRow = [
  ...get(OY),
  ...get(SH),
  Op.I32Mul,
  ...get(PAD_T),
  Op.I32Sub,
  ...set(TOP),
  ...pick(get(TOP), i32(0), Op.I32GtS),
  ...set(Y0),
  ...pick([...get(TOP), ...get(FH), Op.I32Add], get(IN_H), Op.I32LtS),
  ...set(Y1),
  ...loop(OX, i32(0), get(OUT_W), i32(1), windowColumn),
];

const body = loop(B, i32(0), get(BATCH), i32(1), loop(OY, i32(0), get(OUT_H), i32(1), windowRow));

/** The module, importing `env.memory` as shared (`shared`) or not. */
function moduleBytes(shared: boolean): Uint8Array {
  const I32 = 0x7f;
  const V128 = 0x7b;
  const type = section(1, [1, 0x60, PARAMS, ...new Array<number>(PARAMS).fill(I32), 0]);
  // Limits: shared memories need a maximum (65536 pages, the most a 32-bit memory has).
  const limits = shared ? [0x03, 0, ...unsignedLeb(65536)] : [0x00, 0];
  const imports = section(2, [1, ...text('env'), ...text('memory'), 0x02, ...limits]);
  const functions = section(3, [1, 0]);
  const exports = section(7, [1, ...text('maxPoolGrad'), 0x00, 0]);
  const code = [2, I32_LOCALS, I32, V128_LOCALS, V128, ...body, Op.End];
  const codeSection = section(10, [1, ...unsignedLeb(code.length), ...code]);
  return new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, ...type, ...imports, ...functions, ...exports, ...codeSection]);
}

/** The routine for each memory it was instantiated on (undefined where it cannot run). */
const routines = new WeakMap<WasmMemory, GradientRoutine | undefined>();

function routineFor(memory: WasmMemory): GradientRoutine | undefined {
  if (routines.has(memory)) return routines.get(memory);
  let routine: GradientRoutine | undefined;
  try {
    const shared = typeof SharedArrayBuffer !== 'undefined' && memory.buffer instanceof SharedArrayBuffer;
    const instance = new webAssembly.Instance(new webAssembly.Module(moduleBytes(shared)), { env: { memory } });
    routine = instance.exports.maxPoolGrad as GradientRoutine;
  } catch {
    routine = undefined;
  }
  routines.set(memory, routine);
  return routine;
}

/**
 * Writes the max-pooling gradient of `info`'s windows into `dx` (byte
 * address in `memory`, the input's shape, already zero where no window
 * reads), from the input `x` and `dy` (byte addresses), and returns true;
 * returns false without writing when it cannot: windows that overlap
 * (filter larger than the stride), a channel count that is not a multiple
 * of 4, or an engine without WebAssembly SIMD.
 */
export function maxPoolGradSimd(memory: WasmMemory, info: tf.backend_util.Conv2DInfo, x: number, dy: number, dx: number): boolean {
  const { filterHeight, filterWidth, strideHeight, strideWidth, inChannels } = info;
  if (filterHeight > strideHeight || filterWidth > strideWidth || inChannels % 4 !== 0) return false;
  const routine = routineFor(memory);
  if (routine === undefined) return false;
  routine(
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
  );
  return true;
}
