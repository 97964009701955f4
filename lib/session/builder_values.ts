/**
 * The values a `Builder` writes into a model: tensors (initializers and
 * tensor attributes) from tfjs tensors or typed arrays, and node attributes
 * from plain JavaScript values.
 *
 * JavaScript has one number type, so an attribute's ONNX type comes from its
 * name where ONNX defines it as a float (`alpha`, `beta`, `epsilon`,
 * `momentum`, `ratio`, `scales`, ... and PopART's `lambda`); other numbers
 * are INT (INTS for arrays) unless they are not integers.
 */
import * as tf from '@tensorflow/tfjs';
import { z } from 'zod';
import { hostTensor, hostTensorFromTf, type HostTensor } from '../onnx/proto/host_tensor.js';
import { OnnxElementType } from '../onnx/proto/onnx_element_type.js';
import { ATTRIBUTE_TYPE, type AttributeProto } from '../onnx/proto/onnx_proto.js';
import { tensorToProto } from '../onnx/proto/tensor_proto_data.js';
import { PopartException } from '../common/errors.js';
import { checkedArgument } from './checked_argument.js';

/** The name of an ONNX element type, e.g. `FLOAT` or `INT64` (PopART's data type strings). */
export type ElementTypeName = keyof typeof OnnxElementType;

/** A tensor value: a tfjs tensor, or a typed array (or numbers) with a shape and optionally its ONNX element type. */
export type TensorValue =
  | tf.Tensor
  | {
      readonly data: Float32Array | Float64Array | Int32Array | Uint8Array | readonly number[];
      readonly shape: readonly number[];
      /** The ONNX element type (default: FLOAT for Float32Array, Float64Array and numbers, INT32 for Int32Array, BOOL for Uint8Array). */
      readonly dtype?: ElementTypeName;
    };

/** A node attribute value: a number, numbers, a string, strings, a flag (INT 0/1) or a tensor. */
export type AttributeValue = number | readonly number[] | string | readonly string[] | boolean | TensorValue;

/** Attributes ONNX (and PopART) define as FLOAT or FLOATS. */
const FLOAT_ATTRIBUTES = new Set([
  'alpha',
  'beta',
  'gamma',
  'bias',
  'lambd',
  'lambda',
  'epsilon',
  'momentum',
  'ratio',
  'max',
  'min',
  'spatial_scale',
  'extrapolation_value',
  'cubic_coeff_a',
  'seed',
  'mean',
  'scale',
  'high',
  'low',
  'value_float',
  'value_floats',
  'scales',
  'activation_alpha',
  'activation_beta',
  'clip',
]);

const ELEMENT_TYPE_NAMES = Object.keys(OnnxElementType) as [ElementTypeName, ...ElementTypeName[]];

const tensorSchema = z.object({
  data: z.union([z.instanceof(Float32Array), z.instanceof(Float64Array), z.instanceof(Int32Array), z.instanceof(Uint8Array), z.array(z.number())]),
  shape: z.array(z.number().int().nonnegative()),
  dtype: z.enum(ELEMENT_TYPE_NAMES).optional(),
});

/** The element type code of a type name; an error naming the valid names otherwise. */
export function elementTypeCode(name: string, where: string): number {
  return OnnxElementType[checkedArgument(z.enum(ELEMENT_TYPE_NAMES), name, where)];
}

/** A tensor value as a host tensor; `where` names it in errors. */
export function hostTensorOf(value: TensorValue, where: string): HostTensor {
  if (value instanceof tf.Tensor) return hostTensorFromTf(value);
  const checked = checkedArgument(tensorSchema, value, where);
  const size = checked.shape.reduce((a, b) => a * b, 1);
  if (checked.data.length !== size) {
    throw new PopartException(`${where}: ${checked.data.length} values do not fill the shape [${checked.shape.join(', ')}] (${size} values)`);
  }
  const type = checked.dtype
    ? OnnxElementType[checked.dtype]
    : checked.data instanceof Int32Array
      ? OnnxElementType.INT32
      : checked.data instanceof Uint8Array
        ? OnnxElementType.BOOL
        : OnnxElementType.FLOAT;
  return hostTensor(type, checked.shape, checked.data);
}

function emptyAttribute(name: string, type: number): AttributeProto {
  return { name, type, floats: [], ints: [], strings: [], tensors: [], graphs: [] };
}

/** An INT attribute. */
export function intAttribute(name: string, value: number): AttributeProto {
  return { ...emptyAttribute(name, ATTRIBUTE_TYPE.INT), i: value };
}

/** An attribute of a node; `where` names the node in errors. */
export function attributeProto(name: string, value: AttributeValue, where: string): AttributeProto {
  const float = FLOAT_ATTRIBUTES.has(name);
  if (typeof value === 'boolean') return intAttribute(name, value ? 1 : 0);
  if (typeof value === 'number') {
    return float || !Number.isInteger(value) ? { ...emptyAttribute(name, ATTRIBUTE_TYPE.FLOAT), f: value } : intAttribute(name, value);
  }
  if (typeof value === 'string') return { ...emptyAttribute(name, ATTRIBUTE_TYPE.STRING), s: new TextEncoder().encode(value) };
  if (Array.isArray(value)) {
    if (value.every((v) => typeof v === 'string')) {
      return { ...emptyAttribute(name, ATTRIBUTE_TYPE.STRINGS), strings: (value as string[]).map((v) => new TextEncoder().encode(v)) };
    }
    const numbers = checkedArgument(z.array(z.number()), value, `${where}: attribute '${name}'`);
    return float || numbers.some((v) => !Number.isInteger(v))
      ? { ...emptyAttribute(name, ATTRIBUTE_TYPE.FLOATS), floats: numbers }
      : { ...emptyAttribute(name, ATTRIBUTE_TYPE.INTS), ints: numbers };
  }
  return { ...emptyAttribute(name, ATTRIBUTE_TYPE.TENSOR), t: tensorToProto('', hostTensorOf(value as TensorValue, `${where}: attribute '${name}'`)) };
}
