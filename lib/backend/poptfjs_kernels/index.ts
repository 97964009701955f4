/**
 * poptfjs's own kernels (`poptfjs.*`), registered for the tfjs backends
 * poptfjs computes on, with their gradients. Their shape rules for planning
 * with shapes only are in ../shape_only/kernels/poptfjs_ops.ts.
 */
import { registerIdentityKernels } from './identity_kernels.js';
import { registerCustomOpKernels } from './custom_op_kernels.js';
import { registerCpuOpKernels } from './cpu_op_kernels.js';
import { registerCtcBeamSearchKernel } from './ctc_beam_search_kernel.js';
import { registerDynamicSliceKernels } from './dynamic_slice_kernels.js';
import { registerSerializedMatMulKernel } from './serialized_matmul_kernel.js';
import { registerReluKernels } from './relu_kernels.js';

export { POPTFJS_KERNELS, type PoptfjsKernelName } from './kernel_names.js';
export { PRINTED_GRADIENT_SUFFIX } from './identity_kernels.js';

/** Registers poptfjs's kernels for each of `backendNames` (those already registered are kept) and their gradients. */
export function registerPoptfjsKernels(backendNames: readonly string[]): void {
  registerIdentityKernels(backendNames);
  registerCustomOpKernels(backendNames);
  registerCpuOpKernels(backendNames);
  registerCtcBeamSearchKernel(backendNames);
  registerDynamicSliceKernels(backendNames);
  registerSerializedMatMulKernel(backendNames);
  registerReluKernels(backendNames);
}
