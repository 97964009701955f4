/**
 * `customOp`: PopTorch's `custom_op`, an op whose kernels the user writes,
 * here in JavaScript (`registerCustomOp`) instead of a PopART library.
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../lib/common/errors.js';
import { POPTFJS_KERNELS } from '../lib/backend/poptfjs_kernels/kernel_names.js';
import { MAX_CUSTOM_OP_OUTPUTS, type CustomOpNodeAttrs } from '../lib/backend/poptfjs_kernels/custom_op_kernels.js';
import { registeredCustomOp, type CustomOpAttribute, type CustomOpAttributes } from '../lib/backend/poptfjs_kernels/custom_op_registry.js';

export {
  registerCustomOp,
  unregisterCustomOp,
  type CustomOpAttribute,
  type CustomOpAttributes,
  type CustomOpDefinition,
} from '../lib/backend/poptfjs_kernels/custom_op_registry.js';

function invalid(message: string): PoptfjsError {
  return new PoptfjsError(`customOp: ${message}`, { type: 'trace', location: 'customOp' });
}

function typeName(x: unknown): string {
  return x === null ? 'null' : Array.isArray(x) ? 'array' : typeof x;
}

function checkAscii(text: string, what: string): void {
  if ([...text].some((ch) => ch.charCodeAt(0) >= 128)) throw invalid(`${what} ${JSON.stringify(text)} contains non-ASCII characters`);
}

/** The attributes, checked as PopTorch checks them: numbers, ASCII strings, or arrays of only numbers or only strings. */
function checkedAttributes(attributes: unknown): CustomOpAttributes {
  if (typeof attributes !== 'object' || attributes === null || Array.isArray(attributes))
    throw invalid(`attributes must be an object of name: value, got ${typeName(attributes)}`);
  const checked: Record<string, CustomOpAttribute> = {};
  for (const [key, value] of Object.entries(attributes)) {
    checkAscii(key, 'attribute name');
    const ok =
      typeof value === 'number' ||
      typeof value === 'string' ||
      (Array.isArray(value) && value.every((e) => typeof e === typeof value[0]) && ['number', 'string', 'undefined'].includes(typeof value[0]));
    if (!ok) {
      const mixed = Array.isArray(value) && !value.every((e) => typeof e === typeof value[0]);
      throw invalid(`attribute '${key}' must be a number, a string, or an array of only numbers or only strings, got ${mixed ? 'an array of mixed types' : typeName(value)}`);
    }
    for (const text of Array.isArray(value) ? value : [value]) if (typeof text === 'string') checkAscii(text, `attribute '${key}'`);
    checked[key] = Array.isArray(value) ? [...(value as number[])] : (value as number | string);
  }
  return checked;
}

/**
 * Applies custom op (`name`, `domain`) to `inputs` and returns its outputs,
 * as PopTorch's `poptorch.custom_op(inputs, name, domain, domain_version,
 * example_outputs, attributes)`. The op's kernels are JavaScript functions
 * registered beforehand with {@link registerCustomOp}: `forward` computes the
 * outputs, `gradient` (needed to train through the op) the inputs'
 * gradients. `exampleOutputs` give the shape and dtype of each output (their
 * values do not matter); the forward kernel must return exactly those.
 * `attributes` (numbers, ASCII strings, arrays of only numbers or only
 * strings) are handed to both kernels.
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
  if (!Array.isArray(inputs) || inputs.some((t) => !(t instanceof tf.Tensor))) throw invalid('inputs must be an array of tf.Tensors');
  if (typeof name !== 'string' || name === '') throw invalid(`the name must be a non-empty string, got ${JSON.stringify(name)}`);
  if (typeof domain !== 'string' || domain === '') throw invalid(`the domain must be a non-empty string, got ${JSON.stringify(domain)}`);
  if (!Number.isInteger(domainVersion) || domainVersion < 0) throw invalid(`the domain version must be a non-negative integer, got ${String(domainVersion)}`);
  if (!Array.isArray(exampleOutputs) || exampleOutputs.length === 0 || exampleOutputs.some((t) => !(t instanceof tf.Tensor))) {
    throw invalid('exampleOutputs must be a non-empty array of tf.Tensors, one with the shape and dtype of each output');
  }
  if (exampleOutputs.length > MAX_CUSTOM_OP_OUTPUTS) throw invalid(`a custom op has at most ${MAX_CUSTOM_OP_OUTPUTS} outputs, got ${exampleOutputs.length} example outputs`);
  const checked = checkedAttributes(attributes);
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
