/**
 * The ONNX element type of a floating-point tensor a node computes, as ONNX's
 * type constraints give it: a Cast's `to`, a CastLike's second input's type,
 * LayerNormalization's mean and inverse standard deviation (outputs 1 and 2)
 * in its `stash_type`, and every other floating-point output in the type of
 * the node's first floating-point input (FLOAT when it has none). Sessions
 * compute FLOAT16 tensors in float16: this is how they know which ones are.
 */
import { isFloatingElementType, OnnxElementType } from './proto/onnx_element_type.js';
import type { OperatorCall } from './operators/operator.js';
import { castTarget } from './operators/tensor_creation.js';

/** The element type of floating-point output `output` of the node `call` evaluates. */
export function floatOutputElementType(call: OperatorCall, output: number): number {
  switch (call.opType) {
    case 'Cast':
      return castTarget(call);
    case 'CastLike':
      return call.inputElementType(1) ?? OnnxElementType.FLOAT;
    case 'LayerNormalization':
      if (output > 0) return call.attrs.int('stash_type', OnnxElementType.FLOAT);
  }
  for (let i = 0; i < call.inputCount; i++) {
    const type = call.hasInput(i) ? call.inputElementType(i) : undefined;
    if (type !== undefined && isFloatingElementType(type)) return type;
  }
  return OnnxElementType.FLOAT;
}
