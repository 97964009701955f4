/**
 * `setAvailableMemory`: PopTorch's `set_available_memory`, the temporary
 * memory one matrix product or convolution may take.
 */
import type * as tf from '@tensorflow/tfjs';
import { currentRecorder } from '../lib/trace/kernel_recorder.js';
import { POPTFJS_KERNELS } from '../lib/backend/poptfjs_kernels/kernel_names.js';
import { argumentError, checkTensor } from './dynamic_offset.js';

const OP = 'setAvailableMemory';
/** The kernels of matrix products and convolutions, whose planner takes the proportion. */
const PLANNED_KERNELS = /^(BatchMatMul|_FusedMatMul|MatMul)$|Conv[23]D|DepthwiseConv2d/;

function isPlanned(kernel: string): boolean {
  return kernel === POPTFJS_KERNELS.serializedMatMul || PLANNED_KERNELS.test(kernel);
}

/**
 * Returns `x` unchanged and sets the proportion of a tile's memory (in
 * (0, 1]; the IPU's default is 0.6, `Options.setAvailableMemoryProportion`)
 * that the matrix product or convolution that made `x`, and its backward
 * products, may use for temporaries: the planner of that op picks the fastest
 * split whose temporary memory fits it, so a smaller proportion trades time
 * for memory. `x` must be the output of a matrix product or convolution (a
 * dense or convolution layer's output, which includes its bias and
 * activation, or `tf.matMul`'s). Outside a poptfjs model it is the identity.
 */
export function setAvailableMemory(x: tf.Tensor, proportion: number): tf.Tensor {
  checkTensor(OP, 'x', x);
  if (typeof proportion !== 'number' || !(proportion > 0 && proportion <= 1)) {
    throw argumentError(OP, `the proportion must be a number in (0, 1] (of a tile's memory the op may use for temporaries; the default is 0.6), got ${String(proportion)}`);
  }
  const recorder = currentRecorder();
  if (!recorder) return x;
  const producer = recorder.producerNode(x);
  const kernel = producer === undefined ? undefined : recorder.builder.node(producer).kernel;
  if (producer === undefined || !isPlanned(kernel!)) {
    throw argumentError(
      OP,
      `x must be the output of a matrix product or convolution, whose planner takes the proportion; got ${kernel === undefined ? 'a tensor no kernel of the model made' : `the output of ${kernel}`}`,
    );
  }
  recorder.builder.annotateNode(producer, { availableMemoryProportion: proportion });
  return x;
}
