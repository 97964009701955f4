/**
 * Tile cycles per element of element-wise operations, in float16 and in
 * float32: poplibs' cycles per loop over the elements per loop, with the
 * loop's load/store overhead (lib/popops/popopsCycleEstimators.hpp and
 * .cpp, `binaryOpInnerLoopCycles`/`unaryOpInnerLoopCycles`). Six workers
 * each issue every sixth cycle, so worker cycles per element are tile cycles
 * per element.
 */
import type { CyclesPerElement } from './kernel_record.js';

/** The cycles per element of each operation poplibs estimates, by tfjs kernel name. */
export const POPLIBS_CYCLES = {
  // ADD/SUBTRACT/MULTIPLY: 1 cycle per 64-bit vector + 2 of load/store.
  Add: [0.75, 1.5],
  Sub: [0.75, 1.5],
  Multiply: [0.75, 1.5],
  AddN: [0.75, 1.5],
  SquaredDifference: [1.5, 3],
  // MAXIMUM/MINIMUM {4, false, 4} half, {3, false, 2} float; comparisons store bytes (_st8).
  Maximum: [1, 1.5],
  Minimum: [1, 1.5],
  Greater: [1.5, 2],
  GreaterEqual: [1.5, 2],
  Less: [1.5, 2],
  LessEqual: [1.5, 2],
  Equal: [1.5, 2],
  NotEqual: [1.5, 2],
  LogicalAnd: [1.5, 2],
  LogicalOr: [1.5, 2],
  LogicalNot: [1.5, 2],
  Select: [1, 1.5],
  // DIVIDE {21, false, 4} half, {10, false, 2} float.
  RealDiv: [5.25, 5],
  FloorDiv: [5.25, 5],
  Reciprocal: [3.75, 3],
  // RELU {2..3, false, 4/2}; NEGATE, ABSOLUTE, SQUARE, casts: one instruction.
  Relu: [0.75, 1.5],
  Relu6: [1, 2],
  LeakyRelu: [1, 2],
  Prelu: [1, 2],
  Step: [1, 2],
  Neg: [0.5, 1],
  Abs: [0.5, 1],
  Square: [0.5, 1],
  Sign: [1.25, 2.5],
  Cast: [1, 1],
  Floor: [0.5, 1],
  Ceil: [0.5, 1],
  Round: [0.5, 1],
  ClipByValue: [1, 2],
  // EXPONENT {4, false, 4} half, {6, false, 2} float; LOGARITHM {4,..,4} / {12,..,2}; TANH, SIGMOID; SQRT, RSQRT.
  Exp: [1, 3],
  Expm1: [1.25, 4],
  Log: [1, 6],
  Log1p: [4.5, 18],
  Tanh: [1, 6],
  Sigmoid: [1.5, 6],
  Softplus: [2, 9],
  Sqrt: [5.75, 5],
  Rsqrt: [4.75, 4],
  Pow: [6, 12],
  // ERF {13, false, 1} / {41, false, 1}; GELU_ERF {16, false, 1} / {22, false, 1}.
  Erf: [13, 41],
  Elu: [1.5, 4],
  Selu: [1.5, 4],
  Sin: [25, 100],
  Cos: [25, 100],
  Tan: [30, 120],
  Asin: [102, 102],
  Acos: [102, 102],
  Atan: [102, 102],
  Atan2: [144, 136],
  Sinh: [6, 12],
  Cosh: [6, 12],
  Asinh: [6, 12],
  Acosh: [6, 12],
  Atanh: [6, 12],
  IsNan: [0.75, 1.5],
  IsInf: [1.25, 1.5],
  IsFinite: [1.25, 2.5],
} as const satisfies Record<string, CyclesPerElement>;

/** An operation poplibs estimates. */
export type PoplibsOperation = keyof typeof POPLIBS_CYCLES;

/** Cycles per element of an operation poplibs' tables do not list (a few instructions per element). */
export const DEFAULT_CYCLES_PER_ELEMENT: CyclesPerElement = [1.5, 3];

/** The cycles per element of operations applied one after another to each element in one vertex. */
export function chained(...tables: readonly CyclesPerElement[]): CyclesPerElement {
  return [tables.reduce((n, t) => n + t[0], 0), tables.reduce((n, t) => n + t[1], 0)];
}

/** The cycles per element of `table` in float16 or float32. */
export function cyclesIn(table: CyclesPerElement, float16: boolean): number {
  return float16 ? table[0] : table[1];
}
