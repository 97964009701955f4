/**
 * Tensors held in host memory as typed arrays: ONNX initializers, constants,
 * shapes and other values known when a model is imported.
 *
 * Each ONNX element type has one JavaScript form: FLOAT, FLOAT16 and BFLOAT16
 * a Float32Array; DOUBLE, INT64, UINT32 and UINT64 a Float64Array (exact for
 * integers up to 2^53 in magnitude); the smaller integer types an Int32Array;
 * BOOL a Uint8Array of 0/1; STRING an array of strings.
 */
import * as tf from '@tensorflow/tfjs';
import { OnnxError } from './onnx_errors.js';
import { OnnxElementType, elementTypeName, elementTypeOfDtype, tfjsDtypeOf } from './onnx_element_type.js';
import { roundFloat16Array } from '../../precision/float16.js';

/** The data of a {@link HostTensor}. */
export type HostTensorData = Float32Array | Float64Array | Int32Array | Uint8Array | string[];

/** A tensor in host memory with its ONNX element type. */
export interface HostTensor {
  /** The ONNX element type (a {@link OnnxElementType} value). */
  readonly elementType: number;
  readonly shape: readonly number[];
  /** Row-major data, in the form the element type's doc above gives. */
  readonly data: HostTensorData;
}

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

/** An empty typed array of the form that holds `elementType`. */
export function emptyHostData(elementType: number, length: number): HostTensorData {
  switch (elementType) {
    case OnnxElementType.FLOAT:
    case OnnxElementType.FLOAT16:
    case OnnxElementType.BFLOAT16:
      return new Float32Array(length);
    case OnnxElementType.DOUBLE:
    case OnnxElementType.INT64:
    case OnnxElementType.UINT32:
    case OnnxElementType.UINT64:
      return new Float64Array(length);
    case OnnxElementType.BOOL:
      return new Uint8Array(length);
    case OnnxElementType.STRING:
      return new Array<string>(length).fill('');
    default:
      return new Int32Array(length);
  }
}

/** A host tensor of `elementType` with the given values (converted to the type's data form; FLOAT16 values rounded to float16). */
export function hostTensor(elementType: number, shape: readonly number[], values: ArrayLike<number> | readonly string[]): HostTensor {
  const data = emptyHostData(elementType, values.length);
  if (Array.isArray(data)) (values as readonly string[]).forEach((v, i) => (data[i] = v));
  else (data as Float64Array).set(values as ArrayLike<number>);
  if (elementType === OnnxElementType.FLOAT16) roundFloat16Array(data as Float32Array, data as Float32Array);
  return { elementType, shape: [...shape], data };
}

/** The values of a numeric host tensor as plain numbers (booleans as 0/1). */
export function hostNumbers(tensor: HostTensor): number[] {
  if (Array.isArray(tensor.data)) throw new OnnxError(`expected a numeric tensor, got a STRING tensor of shape [${tensor.shape.join(', ')}]`);
  return Array.from(tensor.data as ArrayLike<number>);
}

/**
 * Uploads a host tensor to tfjs. `what` names the tensor in errors: an
 * integer value outside the int32 range that tfjs holds integers in is an
 * error (or, with `clampIntegers`, is clamped into the range: for shape
 * arithmetic at import, where INT64_MAX means "to the end"), and so is an
 * element type tfjs cannot hold.
 */
export function hostTensorToTf(tensor: HostTensor, what: string, clampIntegers = false): tf.Tensor {
  const dtype = tfjsDtypeOf(tensor.elementType);
  if (dtype === undefined) {
    throw new OnnxError(`${what}: element type ${elementTypeName(tensor.elementType)} is not supported`);
  }
  const shape = [...tensor.shape];
  if (dtype === 'string') return tf.tensor(tensor.data as string[], shape, 'string');
  if (dtype === 'int32' && !(tensor.data instanceof Int32Array)) {
    const values = tensor.data as Float64Array;
    const out = new Int32Array(values.length);
    for (let i = 0; i < values.length; i++) {
      const v = values[i]!;
      if (v < INT32_MIN || v > INT32_MAX) {
        if (clampIntegers) {
          out[i] = v < 0 ? INT32_MIN : INT32_MAX;
          continue;
        }
        throw new OnnxError(`${what}: ${elementTypeName(tensor.elementType)} value ${v} at flat index ${i} does not fit in int32, the integer type tfjs computes in`);
      }
      out[i] = v;
    }
    return tf.tensor(out, shape, 'int32');
  }
  if (dtype === 'float32' && !(tensor.data instanceof Float32Array)) {
    return tf.tensor(Float32Array.from(tensor.data as Float64Array), shape, 'float32');
  }
  return tf.tensor(tensor.data as Float32Array | Int32Array | Uint8Array, shape, dtype);
}

/**
 * Reads a tfjs tensor into a host tensor. `elementType` defaults to the ONNX
 * type of the tensor's dtype (float32 → FLOAT, int32 → INT32, ...).
 */
export function hostTensorFromTf(tensor: tf.Tensor, elementType: number = elementTypeOfDtype(tensor.dtype)): HostTensor {
  const values = tensor.dataSync() as unknown as ArrayLike<number> | string[];
  if (tensor.dtype === 'string') {
    return hostTensor(
      OnnxElementType.STRING,
      tensor.shape,
      Array.from(values as ArrayLike<unknown>, (v) => (v instanceof Uint8Array ? new TextDecoder().decode(v) : String(v))),
    );
  }
  return hostTensor(elementType, tensor.shape, values as ArrayLike<number>);
}
