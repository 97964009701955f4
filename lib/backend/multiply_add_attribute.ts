/**
 * The attribute by which a `FusedConv2D`, `FusedDepthwiseConv2D` or
 * `_FusedMatMul` node asks the wasm backend for fused multiply-adds (the
 * `MultiplyAddConvolution` pattern sets it; the wasm kernels,
 * wasm_kernels/fused_conv2d.ts, wasm_kernels/fused_depthwise_conv2d.ts and
 * wasm_kernels/fused_mat_mul.ts, read it; other backends ignore it).
 */

/** The attribute's name; its value is `'fused'`. */
export const MULTIPLY_ADD_ATTRIBUTE = 'multiplyAdd';

/** Whether a node's attributes ask for fused multiply-adds. */
export function asksFusedMultiplyAdd(attrs: Readonly<Record<string, unknown>>): boolean {
  return attrs[MULTIPLY_ADD_ATTRIBUTE] === 'fused';
}

/** An activation a convolution or product with fused multiply-adds applies itself. */
export type MultiplyAddActivation = 'linear' | 'relu' | 'relu6';

/** Whether `bias` is absent, or a float32 bias the routines add themselves: one value per output column of `columns`. */
export function isColumnBias(bias: { readonly shape: readonly number[]; readonly dtype: string } | undefined, columns: number): boolean {
  return bias === undefined || (bias.dtype === 'float32' && bias.shape.length === 1 && bias.shape[0] === columns);
}

/** The activations a convolution or product with fused multiply-adds applies itself (others keep the backend's kernel). */
export const MULTIPLY_ADD_ACTIVATIONS: ReadonlySet<string> = new Set<MultiplyAddActivation>(['linear', 'relu', 'relu6']);
