/**
 * Initializers imported without their values, for planning (`plan()` of an
 * ONNX model): a host tensor with the initializer's shape and element type
 * whose data cannot be read. Its weight becomes a variable with a shape and
 * no values (on the shape-only backend); a node that needs its values at
 * import (a Reshape shape held in a large initializer, say) gets an error
 * naming it.
 */
import { DATA_LOCATION, type TensorProto } from './onnx_proto.js';
import type { HostTensor } from './host_tensor.js';
import { OnnxError } from './onnx_errors.js';

/** Initializers with at least this many elements are weights a plan does not read; smaller ones (shapes, scales) are read. */
export const VALUELESS_MIN_ELEMENTS = 1024;

const valueless = new WeakSet<HostTensor>();

/** True if `tensor` was made by {@link valuelessTensor}: it has a shape and no values. */
export function isValueless(tensor: HostTensor): boolean {
  return valueless.has(tensor);
}

/** True if a plan leaves `tensor`'s values unread: it is stored in an external file, or it has {@link VALUELESS_MIN_ELEMENTS} elements or more. */
export function plannedWithoutValues(tensor: TensorProto): boolean {
  const elements = tensor.dims.reduce((n, d) => n * Number(d), 1);
  return tensor.data_location === DATA_LOCATION.EXTERNAL || elements >= VALUELESS_MIN_ELEMENTS;
}

/** The host tensor of `tensor` with its shape and element type, and no values. */
export function valuelessTensor(tensor: TensorProto): HostTensor {
  const name = tensor.name ?? '';
  const host: HostTensor = {
    elementType: tensor.data_type ?? 0,
    shape: tensor.dims.map(Number),
    get data(): never {
      throw new OnnxError(
        `initializer '${name}' is planned without its values (plan() reads no weights), but the model needs them when it is imported; ` +
          'a value an operator must know at import (a shape, a scale) has to be small and held in the model file',
      );
    },
  };
  valueless.add(host);
  return host;
}
