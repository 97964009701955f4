/**
 * Shape rules of poptfjs's own kernels (PopTorch's helper ops,
 * ../../poptfjs_kernels).
 */
import { POPTFJS_KERNELS } from '../../poptfjs_kernels/kernel_names.js';
import { output, type KernelShapeRule } from '../kernel_shape_rule.js';

/** The rules of poptfjs's kernels, by kernel name. */
export const POPTFJS_OP_RULES: Readonly<Record<string, KernelShapeRule>> = {
  /** The input's shape and dtype. */
  [POPTFJS_KERNELS.ipuPrintTensor]: (call) => output(call.input('x').shape, call.input('x').dtype),
  /** The input's shape and dtype. */
  [POPTFJS_KERNELS.nop]: (call) => output(call.input('x').shape, call.input('x').dtype),
  /** The input's shape with `ceil(size / step)` elements along `dim`. */
  [POPTFJS_KERNELS.dynamicSlice]: (call) => {
    const { dim, size, step } = call.attrs as unknown as { dim: number; size: number; step: number };
    const x = call.input('x');
    return output(x.shape.map((n, d) => (d === dim ? Math.ceil(size / step) : n)), x.dtype);
  },
  /** The shape and dtype of the tensor updated. */
  [POPTFJS_KERNELS.dynamicUpdate]: (call) => output(call.input('x').shape, call.input('x').dtype),
};
