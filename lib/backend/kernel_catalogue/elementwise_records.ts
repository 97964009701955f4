/**
 * tfjs's element-wise kernels: one result per element, at poplibs' cycles
 * per element of the operation ({@link POPLIBS_CYCLES}).
 */
import { divisionCost, elementwiseCost, passesCost, unlistedCost, UNLISTED_COST_NOTE, localCopyCost } from './cost_rules.js';
import { flopsPerOutput, noFlops, TRANSCENDENTAL_FLOPS } from './flop_rules.js';
import { POPLIBS_CYCLES, type PoplibsOperation } from './poplibs_cycles.js';
import type { TfjsKernelRecord, TfjsKernelRecords } from './tfjs_record.js';

/** An operation poplibs estimates, one FLOP per output element. */
function arithmetic(operation: PoplibsOperation): TfjsKernelRecord {
  return { category: 'element-wise', cost: elementwiseCost(POPLIBS_CYCLES[operation]), flops: flopsPerOutput(1) };
}

/** A transcendental function poplibs estimates ({@link TRANSCENDENTAL_FLOPS} FLOPs per output element). */
function transcendental(operation: PoplibsOperation): TfjsKernelRecord {
  return { category: 'element-wise', cost: elementwiseCost(POPLIBS_CYCLES[operation]), flops: flopsPerOutput(TRANSCENDENTAL_FLOPS) };
}

/** An element-wise operation poplibs' tables do not list. */
const unlisted: TfjsKernelRecord = { category: 'element-wise', cost: unlistedCost, flops: flopsPerOutput(1), costNote: UNLISTED_COST_NOTE };

/** The element-wise kernels of tfjs, by name. */
export const ELEMENTWISE_RECORDS: TfjsKernelRecords = {
  Add: arithmetic('Add'),
  Sub: arithmetic('Sub'),
  Multiply: arithmetic('Multiply'),
  AddN: arithmetic('AddN'),
  SquaredDifference: arithmetic('SquaredDifference'),
  Maximum: arithmetic('Maximum'),
  Minimum: arithmetic('Minimum'),
  Greater: arithmetic('Greater'),
  GreaterEqual: arithmetic('GreaterEqual'),
  Less: arithmetic('Less'),
  LessEqual: arithmetic('LessEqual'),
  Equal: arithmetic('Equal'),
  NotEqual: arithmetic('NotEqual'),
  LogicalAnd: arithmetic('LogicalAnd'),
  LogicalOr: arithmetic('LogicalOr'),
  LogicalNot: arithmetic('LogicalNot'),
  Select: arithmetic('Select'),
  RealDiv: { category: 'element-wise', cost: divisionCost, flops: flopsPerOutput(1), costNote: 'a division by one number is a multiplication by its reciprocal' },
  FloorDiv: arithmetic('FloorDiv'),
  Reciprocal: arithmetic('Reciprocal'),
  Relu: arithmetic('Relu'),
  Relu6: arithmetic('Relu6'),
  LeakyRelu: arithmetic('LeakyRelu'),
  Prelu: arithmetic('Prelu'),
  Step: arithmetic('Step'),
  Neg: arithmetic('Neg'),
  Abs: arithmetic('Abs'),
  Square: arithmetic('Square'),
  Sign: arithmetic('Sign'),
  Floor: arithmetic('Floor'),
  Ceil: arithmetic('Ceil'),
  Round: arithmetic('Round'),
  ClipByValue: arithmetic('ClipByValue'),
  IsNan: arithmetic('IsNan'),
  IsInf: arithmetic('IsInf'),
  IsFinite: arithmetic('IsFinite'),
  Exp: transcendental('Exp'),
  Expm1: transcendental('Expm1'),
  Log: transcendental('Log'),
  Log1p: transcendental('Log1p'),
  Tanh: transcendental('Tanh'),
  Sigmoid: transcendental('Sigmoid'),
  Softplus: transcendental('Softplus'),
  Sqrt: transcendental('Sqrt'),
  Rsqrt: transcendental('Rsqrt'),
  Pow: transcendental('Pow'),
  Erf: transcendental('Erf'),
  Elu: transcendental('Elu'),
  Selu: transcendental('Selu'),
  Sin: transcendental('Sin'),
  Cos: transcendental('Cos'),
  Tan: transcendental('Tan'),
  Asin: transcendental('Asin'),
  Acos: transcendental('Acos'),
  Atan: transcendental('Atan'),
  Atan2: transcendental('Atan2'),
  Sinh: transcendental('Sinh'),
  Cosh: transcendental('Cosh'),
  Asinh: transcendental('Asinh'),
  Acosh: transcendental('Acosh'),
  Atanh: transcendental('Atanh'),
  /** A cast: each tile converts its elements where they are. */
  Cast: { category: 'element-wise', cost: localCopyCost(true), flops: noFlops },
  /** Normalizing applies a per-channel scale and offset: two passes (popnn's channelMul and addToChannel). */
  FusedBatchNorm: { category: 'element-wise', cost: passesCost(POPLIBS_CYCLES.Multiply, POPLIBS_CYCLES.Add), flops: flopsPerOutput(8) },
  /** A local response normalization: a square, a windowed sum, a power and a product. */
  LRN: {
    category: 'element-wise',
    cost: passesCost(POPLIBS_CYCLES.Square, POPLIBS_CYCLES.Add, POPLIBS_CYCLES.Pow, POPLIBS_CYCLES.Multiply),
    flops: flopsPerOutput(8),
  },
  LRNGrad: unlisted,
  EluGrad: unlisted,
  BitwiseAnd: unlisted,
  LogicalXor: unlisted,
  Mod: unlisted,
  Complex: unlisted,
  ComplexAbs: unlisted,
  Real: unlisted,
  Imag: unlisted,
  /** The broadcast shape of two shapes, element by element. */
  BroadcastArgs: unlisted,
};
