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
import { callBackendKernel, registerForBackends } from './backend_kernel.js';
import { POPTFJS_KERNELS } from './kernel_names.js';

/** The suffix of the title of a printed gradient (PopTorch's `<title>_gradient`). */
export const PRINTED_GRADIENT_SUFFIX = '_gradient';

function identityKernel(backendName: string): tf.KernelFunc {
  return ({ inputs, backend }) => callBackendKernel(backendName, 'Identity', { x: inputs.x! }, {}, backend as tf.KernelBackend);
}

const printGradient: tf.GradConfig = {
  kernelName: POPTFJS_KERNELS.ipuPrintTensor,
  gradFunc: (dy, _saved, attrs) => {
    const grad = dy as tf.Tensor;
    if (attrs.printGradient !== true) return { x: () => grad };
    const gradientAttrs = { ...attrs, title: `${String(attrs.title ?? '')}${PRINTED_GRADIENT_SUFFIX}`, printGradient: false };
    return { x: () => tf.engine().runKernel(POPTFJS_KERNELS.ipuPrintTensor, { x: grad }, gradientAttrs as unknown as tf.NamedAttrMap) as tf.Tensor };
  },
};

const nopGradient: tf.GradConfig = {
  kernelName: POPTFJS_KERNELS.nop,
  gradFunc: (dy) => ({ x: () => dy as tf.Tensor }),
};

const float16CastGradient: tf.GradConfig = {
  kernelName: POPTFJS_KERNELS.float16Cast,
  gradFunc: (dy) => ({ x: () => dy as tf.Tensor }),
};

/** Registers the identity kernels for `backendNames`, and their gradients. */
export function registerIdentityKernels(backendNames: readonly string[]): void {
  registerForBackends(POPTFJS_KERNELS.ipuPrintTensor, backendNames, identityKernel);
  registerForBackends(POPTFJS_KERNELS.nop, backendNames, identityKernel);
  registerForBackends(POPTFJS_KERNELS.float16Cast, backendNames, identityKernel);
  if (!tf.getGradient(POPTFJS_KERNELS.ipuPrintTensor)) tf.registerGradient(printGradient);
  if (!tf.getGradient(POPTFJS_KERNELS.nop)) tf.registerGradient(nopGradient);
  if (!tf.getGradient(POPTFJS_KERNELS.float16Cast)) tf.registerGradient(float16CastGradient);
}
