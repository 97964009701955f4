/**
 * tfjs's matrix products and convolutions, planned on the AMP units by the
 * cost model's planner: the operand exchange, the products and the reduction
 * of partial sums. The fused kernels add their bias and activation on the
 * output in one more pass.
 */
import { productCost, unlistedCost, UNLISTED_COST_NOTE } from './cost_rules.js';
import { convolutionFlops, flopsPerOutput, matMulFlops } from './flop_rules.js';
import type { TfjsKernelRecord, TfjsKernelRecords } from './tfjs_record.js';

/** A matrix product (batched), fused with a bias and activation or not. */
function matrices(fused: boolean): TfjsKernelRecord {
  return { category: 'product', product: 'matrices', cost: productCost(fused), flops: matMulFlops };
}

/** A convolution or one of its gradients, fused with a bias and activation or not. */
function convolution(fused: boolean): TfjsKernelRecord {
  return { category: 'product', product: 'convolution', cost: productCost(fused), flops: convolutionFlops };
}

/** A product the planner does not plan. */
const unplanned: TfjsKernelRecord = { category: 'product', cost: unlistedCost, flops: flopsPerOutput(1), costNote: `not planned as a product: ${UNLISTED_COST_NOTE}` };

/** tfjs's products, by name. */
export const PRODUCT_RECORDS: TfjsKernelRecords = {
  BatchMatMul: matrices(false),
  _FusedMatMul: matrices(true),
  Conv2D: convolution(false),
  Conv2DBackpropFilter: convolution(false),
  Conv2DBackpropInput: convolution(false),
  Conv3D: convolution(false),
  Conv3DBackpropFilterV2: convolution(false),
  Conv3DBackpropInputV2: convolution(false),
  DepthwiseConv2dNative: convolution(false),
  DepthwiseConv2dNativeBackpropFilter: convolution(false),
  DepthwiseConv2dNativeBackpropInput: convolution(false),
  FusedConv2D: convolution(true),
  FusedDepthwiseConv2D: convolution(true),
  Einsum: unplanned,
  FFT: unplanned,
  IFFT: unplanned,
};
