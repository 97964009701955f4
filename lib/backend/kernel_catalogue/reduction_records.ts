/**
 * tfjs's reductions: many elements to fewer (sums and maxima along axes,
 * softmax's row sums, pooling windows, searches and sorts).
 */
import { poolingCost, reductionCost, softmaxCost, unlistedCost, UNLISTED_COST_NOTE } from './cost_rules.js';
import { flopsPerInput, flopsPerOutput, poolingFlops } from './flop_rules.js';
import type { TfjsKernelRecord, TfjsKernelRecords } from './tfjs_record.js';

/** A reduction along axes: one FLOP per input element. */
const reduction: TfjsKernelRecord = { category: 'reduction', cost: reductionCost, flops: flopsPerInput };

/** A pooling window per output element (or, for a gradient, per input element). */
function pooling(gradient: boolean): TfjsKernelRecord {
  return { category: 'reduction', cost: poolingCost(gradient), flops: poolingFlops };
}

/** A search, sort or windowed reduction poptfjs has no cycle estimate for. */
const unlisted: TfjsKernelRecord = { category: 'reduction', cost: unlistedCost, flops: flopsPerOutput(1), costNote: UNLISTED_COST_NOTE };

/** tfjs's reductions, by name. */
export const REDUCTION_RECORDS: TfjsKernelRecords = {
  Sum: reduction,
  Mean: reduction,
  Max: reduction,
  Min: reduction,
  Prod: reduction,
  All: reduction,
  Any: reduction,
  ArgMax: reduction,
  ArgMin: reduction,
  Cumsum: reduction,
  Cumprod: reduction,
  /** The row maxima, a subtraction, an exponential, the row sums and a division: five FLOPs an element. */
  Softmax: { category: 'reduction', cost: softmaxCost(false), flops: flopsPerOutput(5) },
  /** Log-softmax, a kernel of its own in graphs other than tfjs's (ONNX's LogSoftmax): the same, with log(sum) once a row and a subtract. */
  LogSoftmax: { category: 'reduction', cost: softmaxCost(true), flops: flopsPerOutput(5) },
  AvgPool: pooling(false),
  AvgPool3D: pooling(false),
  MaxPool: pooling(false),
  MaxPool3D: pooling(false),
  MaxPoolWithArgmax: pooling(false),
  AvgPoolGrad: pooling(true),
  AvgPool3DGrad: pooling(true),
  MaxPoolGrad: pooling(true),
  MaxPool3DGrad: pooling(true),
  Dilation2D: unlisted,
  Dilation2DBackpropFilter: unlisted,
  Dilation2DBackpropInput: unlisted,
  TopK: unlisted,
  Unique: unlisted,
  SearchSorted: unlisted,
  NonMaxSuppressionV3: unlisted,
  NonMaxSuppressionV4: unlisted,
  NonMaxSuppressionV5: unlisted,
};
