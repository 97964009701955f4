/**
 * `customOp`: PopTorch's `custom_op`, an op whose kernels the user writes,
 * here in JavaScript (`registerCustomOp`) instead of a PopART library.
 */
import * as tf from '@tensorflow/tfjs';
import { POPTFJS_KERNELS } from '../lib/backend/kernel_catalogue/kernel_catalogue.js';
import { MAX_CUSTOM_OP_OUTPUTS, type CustomOpNodeAttrs } from '../lib/backend/poptfjs_kernels/custom_op_kernels.js';
import { registeredCustomOp, type CustomOpAttributes } from '../lib/backend/poptfjs_kernels/custom_op_registry.js';
import { checkedCustomOpAttributes, customOpArgumentError } from './arguments/custom_op_attributes.js';

export {
  registerCustomOp,
  unregisterCustomOp,
  type CustomOpAttribute,
  type CustomOpAttributes,
  type CustomOpDefinition,
} from '../lib/backend/poptfjs_kernels/custom_op_registry.js';

/**
 * Applies custom op (`name`, `domain`) to `inputs` and returns its outputs,
 * as PopTorch's
 * `poptorch.custom_op(inputs, name, domain, domain_version, example_outputs, attributes)`. The op's kernels are JavaScript functions
 * registered beforehand with {@link registerCustomOp}: `forward` computes the
 * outputs, `gradient` (needed to train through the op) the inputs'
 * gradients. `exampleOutputs` give the shape and dtype of each output (their
 * values do not matter); the forward kernel must return exactly those.
 * `attributes` (numbers, ASCII strings, arrays of only numbers or only
 * strings) are handed to both kernels; a number that is not a safe integer
 * is a float attribute, which must be within float32's range as in PopART.
 *
 * In a model, the call is one node of its own, `poptfjs.CustomOp` (its
 * backward node `poptfjs.CustomOpGrad`), whose attributes (name, domain,
 * version, attributes, outputs) travel with the executable: a saved,
 * exported or cached executable runs wherever the op is registered, and
 * says which op is missing elsewhere. An op that is not registered is an
 * error where it is called (and so while tracing); so is training through an
 * op registered without a gradient.
 *
 * Cost on the simulated IPU: the model does not know what the kernel does,
 * so it takes it to be element-wise: an element-wise vertex (170 cycles) plus
 * 3 tile cycles (float32; 1.5 in float16) per output element, the elements
 * spread evenly over the tiles, its smaller inputs broadcast to the tiles
 * over the exchange, and one sync; the gradient the same per input-gradient
 * element. Its outputs take memory as any activation.
 */
export function customOp(
  inputs: readonly tf.Tensor[],
  name: string,
  domain: string,
  domainVersion: number,
  exampleOutputs: readonly tf.Tensor[],
  attributes: CustomOpAttributes = {},
): tf.Tensor[] {
  if (!Array.isArray(inputs) || inputs.some((t) => !(t instanceof tf.Tensor))) throw customOpArgumentError('inputs must be an array of tf.Tensors');
  if (typeof name !== 'string' || name === '') throw customOpArgumentError(`the name must be a non-empty string, got ${JSON.stringify(name)}`);
  if (typeof domain !== 'string' || domain === '') throw customOpArgumentError(`the domain must be a non-empty string, got ${JSON.stringify(domain)}`);
  if (!Number.isInteger(domainVersion) || domainVersion < 0) throw customOpArgumentError(`the domain version must be a non-negative integer, got ${String(domainVersion)}`);
  if (!Array.isArray(exampleOutputs) || exampleOutputs.length === 0 || exampleOutputs.some((t) => !(t instanceof tf.Tensor))) {
    throw customOpArgumentError('exampleOutputs must be a non-empty array of tf.Tensors, one with the shape and dtype of each output');
  }
  if (exampleOutputs.length > MAX_CUSTOM_OP_OUTPUTS)
    throw customOpArgumentError(`a custom op has at most ${MAX_CUSTOM_OP_OUTPUTS} outputs, got ${exampleOutputs.length} example outputs`);
  const checked = checkedCustomOpAttributes(attributes);
  registeredCustomOp(name, domain, 'customOp');
  const attrs: CustomOpNodeAttrs = {
    name,
    domain,
    domainVersion,
    attributes: checked,
    outputShapes: exampleOutputs.map((t) => [...t.shape]),
    outputDtypes: exampleOutputs.map((t) => t.dtype),
  };
  const out = tf.engine().runKernel(POPTFJS_KERNELS.customOp, [...inputs] as unknown as tf.NamedTensorMap, attrs as unknown as tf.NamedAttrMap) as unknown as
    | tf.Tensor
    | tf.Tensor[];
  return Array.isArray(out) ? out : [out];
}
