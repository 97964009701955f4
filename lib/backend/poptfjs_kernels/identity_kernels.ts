/**
 * The kernels of `ops.ipuPrintTensor`, `ops.nop` and the float16 cast of
 * `half(x)` in a model: all hand their input on unchanged. Outside a run on
 * the simulated IPU (in plain tfjs, and while a model is traced) they are the
 * backend's `Identity`, as PopTorch's ops are the identity on the CPU; the
 * printing of `poptfjs.IpuPrintTensor` is done by the device when it runs the
 * node (lib/runtime/tensor_print.ts), and so is the rounding of a
 * `poptfjs.Float16Cast`, whose output the graph holds as a float16 value.
 *
 * Gradients: a `nop` and a cast pass their gradient through; a print passes it through
 * a print of its own titled `<title>_gradient` when `printGradient` is set
 * (PopTorch's `print_gradient`).
 */
import * as tf from '@tensorflow/tfjs';
import { callBackendKernel, type HostKernel } from './backend_kernel.js';

/** The kernel name of `ops.ipuPrintTensor`. */
export const IPU_PRINT_TENSOR = 'poptfjs.IpuPrintTensor';
/** The kernel name of `ops.nop`. */
export const NOP = 'poptfjs.Nop';
/** The kernel name of `half(x)` of a value a model computes. */
export const FLOAT16_CAST = 'poptfjs.Float16Cast';

/** The suffix of the title of a printed gradient (PopTorch's `<title>_gradient`). */
export const PRINTED_GRADIENT_SUFFIX = '_gradient';

function identityKernel(backendName: string): tf.KernelFunc {
  return ({ inputs, backend }) => callBackendKernel(backendName, 'Identity', { x: inputs.x! }, {}, backend as tf.KernelBackend);
}

const printGradient: tf.GradConfig = {
  kernelName: IPU_PRINT_TENSOR,
  gradFunc: (dy, _saved, attrs) => {
    const grad = dy as tf.Tensor;
    if (attrs.printGradient !== true) return { x: () => grad };
    const gradientAttrs = { ...attrs, title: `${String(attrs.title ?? '')}${PRINTED_GRADIENT_SUFFIX}`, printGradient: false };
    return { x: () => tf.engine().runKernel(IPU_PRINT_TENSOR, { x: grad }, gradientAttrs as unknown as tf.NamedAttrMap) as tf.Tensor };
  },
};

const nopGradient: tf.GradConfig = {
  kernelName: NOP,
  gradFunc: (dy) => ({ x: () => dy as tf.Tensor }),
};

const float16CastGradient: tf.GradConfig = {
  kernelName: FLOAT16_CAST,
  gradFunc: (dy) => ({ x: () => dy as tf.Tensor }),
};

/** `ops.ipuPrintTensor`: hands its input on (the device prints it each time it runs the node). */
export const IPU_PRINT_TENSOR_KERNEL: HostKernel = { kernelName: IPU_PRINT_TENSOR, kernelFunc: identityKernel, gradient: printGradient };

/** `ops.nop`: hands its input on as a copy that no pattern removes. */
export const NOP_KERNEL: HostKernel = { kernelName: NOP, kernelFunc: identityKernel, gradient: nopGradient };

/** `half(x)` of a value a model computes: `x` as float16 (the device rounds the float16 value it outputs). */
export const FLOAT16_CAST_KERNEL: HostKernel = { kernelName: FLOAT16_CAST, kernelFunc: identityKernel, gradient: float16CastGradient };
