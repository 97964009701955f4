/**
 * `setAvailableMemory`: PopTorch's `set_available_memory`, the temporary
 * memory one matrix product, convolution, gather or scatter may take.
 */
import type * as tf from '@tensorflow/tfjs';
import { getLogger } from '../lib/common/log.js';
import type { NodeId } from '../lib/ir/graph.js';
import { currentRecorder, type KernelRecorder } from '../lib/trace/kernel_recorder.js';
import { POPTFJS_KERNELS } from '../lib/backend/kernel_catalogue/kernel_catalogue.js';
import { argumentError, checkTensor } from './arguments/dynamic_offset.js';

const OP = 'setAvailableMemory';
const log = getLogger('op');

/** The kernels of matrix products and convolutions, whose planner takes the proportion. */
const PLANNED_KERNELS = /^(BatchMatMul|_FusedMatMul|MatMul)$|Conv[23]D|DepthwiseConv2d/;
/** Gathers and scatters (embedding lookups, indexing): PopTorch passes them the proportion too; the simulated IPU gives them no temporaries. */
const LOOKUP_KERNELS = new Set(['GatherV2', 'GatherNd', 'ScatterNd', 'TensorScatterUpdate', 'UnsortedSegmentSum']);
/** What a layer applies after its product: a reshape (a dense layer on a 3-D or 4-D input), the bias, the activation. */
const FOLLOWERS = new Set(['Reshape', 'Add', 'Relu', 'Relu6', 'Elu', 'Selu', 'Sigmoid', 'Tanh', 'Softplus', 'Softmax', 'LeakyRelu', 'Prelu']);
/** How many followers the search walks back through (a reshape, a bias and an activation). */
const MAX_FOLLOWERS = 3;

function isPlanned(kernel: string): boolean {
  return kernel === POPTFJS_KERNELS.serializedMatMul || PLANNED_KERNELS.test(kernel);
}

/** The node the proportion applies to: `node` if it takes one, else the first one found through its followers, depth first. */
function target(recorder: KernelRecorder, node: NodeId, followers = 0): NodeId | undefined {
  const { kernel, inputs } = recorder.builder.node(node);
  if (isPlanned(kernel) || LOOKUP_KERNELS.has(kernel)) return node;
  if (!FOLLOWERS.has(kernel) || followers === MAX_FOLLOWERS) return undefined;
  for (const input of inputs) {
    const source = recorder.builder.value(input).source;
    const found = source.kind === 'node' ? target(recorder, source.node, followers + 1) : undefined;
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * Returns `x` unchanged and sets the proportion of a tile's memory (in
 * (0, 1]; the IPU's default is 0.6, `Options.setAvailableMemoryProportion`)
 * that the op that made `x`, and its backward ops, may use for temporaries,
 * as PopTorch's `set_available_memory` does. The op is the matrix product,
 * convolution, gather or scatter that made `x`, or the first one found
 * behind what a layer applies after its product: a reshape (a dense layer on
 * a 3-D or 4-D input), the bias addition and the activation (up to three of
 * them, as PopTorch looks through the ops a linear layer is made of). A
 * product's or convolution's planner picks the fastest split whose temporary
 * memory fits it, so a smaller proportion trades time for memory. A gather or
 * scatter (embedding lookups, indexing) keeps the proportion on its node
 * (`irText()`, the executable file), but the simulated IPU gives those no
 * temporary memory, so it changes no figure (a warning says so). On any
 * other tensor (a constant, an input, an element-wise result) it is the
 * identity, as PopTorch documents, with a warning. Outside a poptfjs model it
 * is the identity.
 */
export function setAvailableMemory(x: tf.Tensor, proportion: number): tf.Tensor {
  checkTensor(OP, 'x', x);
  if (typeof proportion !== 'number' || !(proportion > 0 && proportion <= 1)) {
    throw argumentError(OP, `the proportion must be a number in (0, 1] (of a tile's memory the op may use for temporaries; the default is 0.6), got ${String(proportion)}`);
  }
  const recorder = currentRecorder();
  if (!recorder) return x;
  const producer = recorder.producerNode(x);
  const found = producer === undefined ? undefined : target(recorder, producer);
  if (found === undefined) {
    const what = producer === undefined ? 'a tensor no kernel of the model made' : `the output of ${recorder.builder.node(producer).kernel}`;
    log.warn(
      `${OP}: x is ${what}, which follows no matrix product, convolution, gather or scatter: the proportion ${proportion} changes nothing (as in PopTorch, the call is the identity)`,
    );
    return x;
  }
  const { kernel } = recorder.builder.node(found);
  if (LOOKUP_KERNELS.has(kernel)) {
    log.warn(
      `${OP}: the proportion ${proportion} is kept on the ${kernel} that made x, but the simulated IPU gives gathers and scatters no temporary memory, so it changes no figure`,
    );
  }
  recorder.builder.annotateNode(found, { availableMemoryProportion: proportion });
  return x;
}
