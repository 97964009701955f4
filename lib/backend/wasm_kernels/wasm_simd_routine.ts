/**
 * Small WebAssembly SIMD routines on the wasm backend's own memory, written
 * as instruction bytes.
 *
 * Some training kernels are loops that neither XNNPACK nor JavaScript runs
 * well: JavaScript has no SIMD and mispredicts data-dependent branches, and
 * XNNPACK has no such kernel. Such a loop is written here as the bytes of
 * one WebAssembly function (i32 parameters, i32 and v128 locals, 128-bit
 * SIMD) with the helpers below, and {@link simdRoutine} builds a module
 * around it (a type, the import of the backend's memory, the function) and
 * instantiates it on that memory, once per memory. Where the engine has no
 * WebAssembly SIMD or refuses the module, it returns undefined and the
 * kernel keeps another path.
 */
import type { MultiplyAddActivation } from '../multiply_add_attribute.js';
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';

/** A WebAssembly memory (the WebAssembly API is not in this project's type libraries). */
export interface WasmMemory {
  /** Its bytes (a `SharedArrayBuffer` for a shared memory). */
  readonly buffer: ArrayBufferLike;
}

/**
 * The wasm backend's WebAssembly memory: its Emscripten module's
 * `wasmMemory` (the threaded build) or its instance's exported `memory`
 * (the others); undefined if neither is there.
 */
export function wasmMemory(backend: BackendWasm): WasmMemory | undefined {
  const module = backend.wasm as unknown as { wasmMemory?: WasmMemory; asm?: { memory?: WasmMemory } };
  return module.wasmMemory ?? module.asm?.memory;
}

/** The parts of the WebAssembly API used here. */
interface WebAssemblyApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { readonly exports: Record<string, unknown> };
}

const webAssembly = (globalThis as unknown as { WebAssembly: WebAssemblyApi }).WebAssembly;

/**
 * Whether the engine compiles relaxed SIMD (`f32x4.relaxed_madd`): on by
 * default from Node 22 (V8 11.4); Node 20 needs `--experimental-wasm-relaxed-simd`.
 */
export function relaxedSimdSupported(): boolean {
  // (func (param v128 v128 v128) (result v128) local.get 0 local.get 1 local.get 2 f32x4.relaxed_madd)
  const bytes = [
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 1, 8, 1, 0x60, 3, 0x7b, 0x7b, 0x7b, 1, 0x7b, 3, 2, 1, 0, 10, 13, 1, 11, 0, 0x20, 0, 0x20, 1, 0x20, 2, 0xfd, 0x85, 0x02,
    0x0b,
  ];
  return (webAssembly as unknown as { validate(bytes: Uint8Array): boolean }).validate(new Uint8Array(bytes));
}

/** WebAssembly opcodes. */
export enum Op {
  Block = 0x02,
  Loop = 0x03,
  If = 0x04,
  Else = 0x05,
  Br = 0x0c,
  BrIf = 0x0d,
  End = 0x0b,
  Select = 0x1b,
  LocalGet = 0x20,
  LocalSet = 0x21,
  I32Load = 0x28,
  F32Load = 0x2a,
  I32Store = 0x36,
  I32Const = 0x41,
  F32Const = 0x43,
  I32Eqz = 0x45,
  I32Eq = 0x46,
  I32LtS = 0x48,
  I32LtU = 0x49,
  I32GtS = 0x4a,
  I32GeS = 0x4e,
  I32Add = 0x6a,
  I32Sub = 0x6b,
  I32Mul = 0x6c,
  I32DivU = 0x6e,
  I32RemU = 0x70,
  I32And = 0x71,
  I32Shl = 0x74,
  SimdPrefix = 0xfd,
}

/** SIMD opcodes (after {@link Op.SimdPrefix}, as unsigned LEB128). */
export enum SimdOp {
  Load = 0x00,
  Load32Splat = 0x09,
  Store = 0x0b,
  I8x16Shuffle = 0x0d,
  I32x4Splat = 0x11,
  F32x4Splat = 0x13,
  I32x4Eq = 0x37,
  F32x4Ne = 0x42,
  F32x4Gt = 0x44,
  And = 0x4e,
  Bitselect = 0x52,
  Store32Lane = 0x5a,
  I32x4MaxS = 0xb8,
  F32x4Add = 0xe4,
  F32x4Sub = 0xe5,
  F32x4Mul = 0xe6,
  F32x4Min = 0xe8,
  F32x4Max = 0xe9,
  /** Relaxed SIMD's fused multiply-add `a · b + c` (one rounding where the processor fuses it). */
  F32x4RelaxedMadd = 0x105,
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

/** `local.get i`. */
export const get = (i: number): number[] => [Op.LocalGet, i];
/** `local.set i`. */
export const set = (i: number): number[] => [Op.LocalSet, i];
/** `i32.const n`. */
export const i32 = (n: number): number[] => [Op.I32Const, ...signedLeb(n)];
/** `a + b` of two instruction sequences leaving an i32 each. */
export const add = (a: number[], b: number[]): number[] => [...a, ...b, Op.I32Add];
/** `a · b` of two instruction sequences leaving an i32 each. */
export const mul = (a: number[], b: number[]): number[] => [...a, ...b, Op.I32Mul];
/** `elements · 4`: the byte offset of a count of 4-byte elements. */
export const bytes = (elements: number[]): number[] => [...elements, ...i32(2), Op.I32Shl];
/**
 * The row-major flat index `((first·n1 + i1)·n2 + i2)·…` of an element, from the index along the first axis and the
 * size and index along each further axis.
 */
export const flatIndex = (first: number[], ...axes: (readonly [size: number[], index: number[]])[]): number[] =>
  axes.reduce((index, [size, i]) => add(mul(index, size), i), first);
/** `f32x4.splat(0)`. */
export const zeros: number[] = [Op.F32Const, 0, 0, 0, 0, Op.SimdPrefix, SimdOp.F32x4Splat];
/** `f32x4.splat(-∞)`. */
export const minusInfinities: number[] = [Op.F32Const, 0x00, 0x00, 0x80, 0xff, Op.SimdPrefix, SimdOp.F32x4Splat];
/** `f32x4.splat(1)`. */
export const ones: number[] = [Op.F32Const, 0x00, 0x00, 0x80, 0x3f, Op.SimdPrefix, SimdOp.F32x4Splat];
/** `f32x4.splat(6)`. */
const sixes: number[] = [Op.F32Const, 0x00, 0x00, 0xc0, 0x40, Op.SimdPrefix, SimdOp.F32x4Splat];
/** Applies `activation` to the f32x4 on the stack: nothing, `max(x, 0)`, or `min(max(x, 0), 6)`. */
export function activate(activation: MultiplyAddActivation): number[] {
  if (activation === 'linear') return [];
  const relu = [...zeros, ...simd(SimdOp.F32x4Max)];
  return activation === 'relu' ? relu : [...relu, ...sixes, ...simd(SimdOp.F32x4Min)];
}
/** A SIMD instruction without immediates. */
export const simd = (op: SimdOp): number[] => [Op.SimdPrefix, ...unsignedLeb(op)];
/** A v128 load or store at the address on the stack plus `offset` bytes (4-byte alignment). */
export const memory = (op: SimdOp.Load | SimdOp.Store, offset = 0): number[] => [...simd(op), 2, ...unsignedLeb(offset)];
/** `v128.load32_splat` of the 4-byte element at the address on the stack: the element in every lane. */
export const loadSplat: number[] = [Op.SimdPrefix, SimdOp.Load32Splat, 2, 0];
/** `v128.store32_lane` of lane 0 of the v128 on the stack at the address below it. */
export const storeFirstLane: number[] = [Op.SimdPrefix, SimdOp.Store32Lane, 2, 0, 0];
/** The 32-bit lanes `lanes` (0-3 of the first operand, 4-7 of the second) of the two v128 on the stack, as one v128 (`i8x16.shuffle`). */
export const shuffle32 = (lanes: readonly [number, number, number, number]): number[] => [
  ...simd(SimdOp.I8x16Shuffle),
  ...lanes.flatMap((lane) => [4 * lane, 4 * lane + 1, 4 * lane + 2, 4 * lane + 3]),
];
/** `f32.load` at the address on the stack. */
export const f32Load: number[] = [Op.F32Load, 2, 0];
/** `a < b ? a : b` or `a > b ? a : b` of two instruction sequences leaving an i32 each. */
export const pick = (a: number[], b: number[], compare: Op.I32LtS | Op.I32GtS): number[] => [...a, ...b, ...a, ...b, compare, Op.Select];
/**
 * The taps of a pooling window along one axis, at output index `index` (i32 locals, by index): the window starts at
 * `start = index·stride - pad`; its taps inside the input run from `first = max(start, 0)` to `end = min(start + size, extent)`.
 */
export function windowSpan(index: number, stride: number, pad: number, size: number, extent: number, start: number, first: number, end: number): number[] {
  return [
    ...[...get(index), ...get(stride), Op.I32Mul, ...get(pad), Op.I32Sub],
    ...set(start),
    ...pick(get(start), i32(0), Op.I32GtS),
    ...set(first),
    ...pick([...get(start), ...get(size), Op.I32Add], get(extent), Op.I32LtS),
    ...set(end),
  ];
}
/** `if (condition) body`, `condition` leaving an i32. */
export const when = (condition: number[], body: number[]): number[] => [...condition, Op.If, 0x40, ...body, Op.End];

/** `for (i = from; i < to; i += step) body`, each an instruction sequence leaving an i32. */
export function loop(i: number, from: number[], to: number[], step: number[], body: number[]): number[] {
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

/**
 * `for (index = from; index < to; ...)` over 4-byte elements: `vectors` four
 * elements at a time while four remain, then `elements` one at a time.
 * `end`, an i32 local, is set to where the vectors stop.
 */
export function fourThenOne(index: number, end: number, from: number[], to: number[], vectors: number[], elements: number[]): number[] {
  return [
    ...to,
    ...from,
    Op.I32Sub,
    ...i32(-4),
    Op.I32And,
    ...from,
    Op.I32Add,
    ...set(end),
    ...loop(index, from, get(end), i32(4), vectors),
    ...loop(index, get(end), to, i32(1), elements),
  ];
}

/**
 * Copies 4-byte elements `from` to `to` (i32 locals `index` and `end` as in
 * {@link fourThenOne}) from byte address `source` to byte address
 * `destination`, each an instruction sequence leaving an i32.
 */
export function copyElements(index: number, end: number, from: number[], to: number[], destination: number[], source: number[]): number[] {
  const at = (base: number[]) => add(base, bytes(get(index)));
  return fourThenOne(
    index,
    end,
    from,
    to,
    [...at(destination), ...at(source), ...memory(SimdOp.Load), ...memory(SimdOp.Store)],
    [...at(destination), ...at(source), Op.I32Load, 2, 0, Op.I32Store, 2, 0],
  );
}

/** One function: how many i32 parameters and i32 and v128 locals it has (indexed in that order), and its body. */
export interface RoutineCode {
  readonly name: string;
  readonly params: number;
  readonly i32Locals: number;
  readonly v128Locals: number;
  readonly body: readonly number[];
}

/** The module of `code`, importing `env.memory` as shared (`shared`) or not. */
function moduleBytes(code: RoutineCode, shared: boolean): Uint8Array {
  const I32 = 0x7f;
  const V128 = 0x7b;
  const type = section(1, [1, 0x60, code.params, ...new Array<number>(code.params).fill(I32), 0]);
  // Limits: shared memories need a maximum (65536 pages, the most a 32-bit memory has).
  const limits = shared ? [0x03, 0, ...unsignedLeb(65536)] : [0x00, 0];
  const imports = section(2, [1, ...text('env'), ...text('memory'), 0x02, ...limits]);
  const functions = section(3, [1, 0]);
  const exports = section(7, [1, ...text(code.name), 0x00, 0]);
  const body = [2, code.i32Locals, I32, code.v128Locals, V128, ...code.body, Op.End];
  const codeSection = section(10, [1, ...unsignedLeb(body.length), ...body]);
  return new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, ...type, ...imports, ...functions, ...exports, ...codeSection]);
}

/** A routine compiled for a memory and instantiated on it. */
interface Instantiated {
  /** The compiled module (a `WebAssembly.Module`), which other threads can instantiate on a shared memory. */
  readonly module: object;
  readonly routine: (...args: number[]) => void;
}

/** The instantiated routines, by memory and routine (undefined where the engine refused one). */
const instances = new WeakMap<WasmMemory, Map<RoutineCode, Instantiated | undefined>>();

/** `code` compiled and instantiated on `memory` (on the first call for that memory), or undefined where the engine refuses it. */
function instantiated(memory: WasmMemory, code: RoutineCode): Instantiated | undefined {
  let routines = instances.get(memory);
  if (routines === undefined) {
    routines = new Map();
    instances.set(memory, routines);
  }
  if (routines.has(code)) return routines.get(code);
  let result: Instantiated | undefined;
  try {
    const shared = typeof SharedArrayBuffer !== 'undefined' && memory.buffer instanceof SharedArrayBuffer;
    const module = new webAssembly.Module(moduleBytes(code, shared));
    const instance = new webAssembly.Instance(module, { env: { memory } });
    result = { module, routine: instance.exports[code.name] as (...args: number[]) => void };
  } catch {
    result = undefined;
  }
  routines.set(code, result);
  return result;
}

/**
 * `code` instantiated on `memory` (built on the first call for that memory),
 * or undefined where the engine refuses it (no WebAssembly SIMD) or there is
 * no memory.
 */
export function simdRoutine(memory: WasmMemory | undefined, code: RoutineCode): ((...args: number[]) => void) | undefined {
  return memory === undefined ? undefined : instantiated(memory, code)?.routine;
}

/** The compiled module of `code` for `memory` (a `WebAssembly.Module`, for another thread to instantiate on the same shared memory), or undefined where the engine refuses it. */
export function compiledRoutine(memory: WasmMemory, code: RoutineCode): object | undefined {
  return instantiated(memory, code)?.module;
}
