/**
 * ONNX element types (`TensorProto.DataType`) and how poptfjs holds each one
 * in tfjs: floating-point types as float32 (doubles lose precision: compare
 * them with a float32 tolerance), integer types as int32 (values outside the
 * int32 range are an error when they reach a tensor), BOOL as bool, STRING as
 * string.
 */
import type { DataType } from '@tensorflow/tfjs';

/** The values of `TensorProto.DataType`. */
export const OnnxElementType = {
  UNDEFINED: 0,
  FLOAT: 1,
  UINT8: 2,
  INT8: 3,
  UINT16: 4,
  INT16: 5,
  INT32: 6,
  INT64: 7,
  STRING: 8,
  BOOL: 9,
  FLOAT16: 10,
  DOUBLE: 11,
  UINT32: 12,
  UINT64: 13,
  COMPLEX64: 14,
  COMPLEX128: 15,
  BFLOAT16: 16,
} as const;

/** A value of {@link OnnxElementType}. */
export type OnnxElementType = (typeof OnnxElementType)[keyof typeof OnnxElementType];

const NAMES = new Map<number, string>(Object.entries(OnnxElementType).map(([name, code]) => [code, name]));

/** The name of an element type code, e.g. `FLOAT` for 1. */
export function elementTypeName(code: number): string {
  return NAMES.get(code) ?? `unknown element type ${code}`;
}

const FLOATING = new Set<number>([OnnxElementType.FLOAT, OnnxElementType.FLOAT16, OnnxElementType.DOUBLE, OnnxElementType.BFLOAT16]);
const INTEGER = new Set<number>([
  OnnxElementType.UINT8,
  OnnxElementType.INT8,
  OnnxElementType.UINT16,
  OnnxElementType.INT16,
  OnnxElementType.INT32,
  OnnxElementType.INT64,
  OnnxElementType.UINT32,
  OnnxElementType.UINT64,
]);

/** True for FLOAT, FLOAT16, BFLOAT16 and DOUBLE. */
export function isFloatingElementType(code: number): boolean {
  return FLOATING.has(code);
}

/** The tfjs dtype that holds values of an ONNX element type, or undefined if tfjs cannot hold it (complex types). */
export function tfjsDtypeOf(code: number): DataType | undefined {
  if (FLOATING.has(code)) return 'float32';
  if (INTEGER.has(code)) return 'int32';
  if (code === OnnxElementType.BOOL) return 'bool';
  if (code === OnnxElementType.STRING) return 'string';
  return undefined;
}

/** The ONNX element type a tfjs dtype is written as when nothing says otherwise. */
export function elementTypeOfDtype(dtype: DataType): OnnxElementType {
  switch (dtype) {
    case 'float32':
      return OnnxElementType.FLOAT;
    case 'int32':
      return OnnxElementType.INT32;
    case 'bool':
      return OnnxElementType.BOOL;
    case 'string':
      return OnnxElementType.STRING;
    default:
      return OnnxElementType.UNDEFINED;
  }
}
