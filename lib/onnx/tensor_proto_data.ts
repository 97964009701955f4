/**
 * Converting between `TensorProto`s and {@link HostTensor}s: the typed data
 * fields (`float_data`, `int64_data`, ...) and little-endian `raw_data` on
 * reading, `raw_data` (or `string_data` for strings) on writing. Data kept in
 * an external file must have been loaded into `raw_data` by the model reader
 * first (see model_file.ts).
 */
import { sizeOf } from '../ir/graph.js';
import { bfloat16BitsToFloat, floatToBfloat16Bits, floatToHalfBits, halfBitsToFloat } from './half_precision.js';
import { emptyHostData, type HostTensor } from './host_tensor.js';
import { OnnxError } from './onnx_errors.js';
import { DATA_LOCATION, type TensorProto } from './onnx_proto.js';
import { OnnxElementType as T, elementTypeName } from './onnx_element_type.js';

const BYTES_PER_ELEMENT: Record<number, number> = {
  [T.FLOAT]: 4,
  [T.UINT8]: 1,
  [T.INT8]: 1,
  [T.UINT16]: 2,
  [T.INT16]: 2,
  [T.INT32]: 4,
  [T.INT64]: 8,
  [T.BOOL]: 1,
  [T.FLOAT16]: 2,
  [T.DOUBLE]: 8,
  [T.UINT32]: 4,
  [T.UINT64]: 8,
  [T.BFLOAT16]: 2,
};

function describe(tensor: TensorProto): string {
  return tensor.name ? `tensor '${tensor.name}'` : 'an unnamed tensor';
}

function readRaw(view: DataView, type: number, i: number): number {
  switch (type) {
    case T.FLOAT:
      return view.getFloat32(i * 4, true);
    case T.DOUBLE:
      return view.getFloat64(i * 8, true);
    case T.UINT8:
    case T.BOOL:
      return view.getUint8(i);
    case T.INT8:
      return view.getInt8(i);
    case T.UINT16:
      return view.getUint16(i * 2, true);
    case T.INT16:
      return view.getInt16(i * 2, true);
    case T.INT32:
      return view.getInt32(i * 4, true);
    case T.UINT32:
      return view.getUint32(i * 4, true);
    case T.INT64:
      return Number(view.getBigInt64(i * 8, true));
    case T.UINT64:
      return Number(view.getBigUint64(i * 8, true));
    case T.FLOAT16:
      return halfBitsToFloat(view.getUint16(i * 2, true));
    case T.BFLOAT16:
      return bfloat16BitsToFloat(view.getUint16(i * 2, true));
    default:
      throw new RangeError(`no raw layout for element type ${type}`);
  }
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

/** `v` as a 64-bit integer; doubles that rounded past the type's range (INT64_MAX read as 2^63) are clamped back into it. */
function clampedBigInt(v: number, min: bigint, max: bigint): bigint {
  const b = BigInt(Math.trunc(v));
  return b < min ? min : b > max ? max : b;
}

function writeRaw(view: DataView, type: number, i: number, v: number): void {
  switch (type) {
    case T.FLOAT:
      return view.setFloat32(i * 4, v, true);
    case T.DOUBLE:
      return view.setFloat64(i * 8, v, true);
    case T.UINT8:
    case T.BOOL:
      return view.setUint8(i, v);
    case T.INT8:
      return view.setInt8(i, v);
    case T.UINT16:
      return view.setUint16(i * 2, v, true);
    case T.INT16:
      return view.setInt16(i * 2, v, true);
    case T.INT32:
      return view.setInt32(i * 4, v, true);
    case T.UINT32:
      return view.setUint32(i * 4, v, true);
    case T.INT64:
      return view.setBigInt64(i * 8, clampedBigInt(v, INT64_MIN, INT64_MAX), true);
    case T.UINT64:
      return view.setBigUint64(i * 8, clampedBigInt(v, 0n, UINT64_MAX), true);
    case T.FLOAT16:
      return view.setUint16(i * 2, floatToHalfBits(v), true);
    case T.BFLOAT16:
      return view.setUint16(i * 2, floatToBfloat16Bits(v), true);
    default:
      throw new RangeError(`no raw layout for element type ${type}`);
  }
}

/** The values a tensor stores in its typed fields, converted to numbers. */
function typedFieldValues(tensor: TensorProto, type: number): ArrayLike<number> {
  switch (type) {
    case T.FLOAT:
      return tensor.float_data;
    case T.DOUBLE:
      return tensor.double_data;
    case T.INT64:
      return tensor.int64_data;
    case T.UINT32:
    case T.UINT64:
      return tensor.uint64_data;
    case T.FLOAT16:
      return tensor.int32_data.map(halfBitsToFloat);
    case T.BFLOAT16:
      return tensor.int32_data.map(bfloat16BitsToFloat);
    default:
      return tensor.int32_data;
  }
}

/** The host tensor a `TensorProto` holds. */
export function tensorFromProto(tensor: TensorProto): HostTensor {
  const type = tensor.data_type ?? T.UNDEFINED;
  const shape = tensor.dims.map(Number);
  const size = sizeOf(shape);
  if (tensor.data_location === DATA_LOCATION.EXTERNAL && tensor.raw_data === undefined) {
    throw new OnnxError(
      `${describe(tensor)} keeps its data in an external file that was not loaded; read the model from its file with readModel`,
    );
  }
  if (type === T.STRING) {
    if (tensor.string_data.length !== size) {
      throw new OnnxError(`${describe(tensor)} has ${tensor.string_data.length} strings for shape [${shape.join(', ')}]`);
    }
    const decoder = new TextDecoder();
    return { elementType: type, shape, data: tensor.string_data.map((s) => decoder.decode(s)) };
  }
  const width = BYTES_PER_ELEMENT[type];
  if (width === undefined) {
    throw new OnnxError(`${describe(tensor)} has element type ${elementTypeName(type)}, which poptfjs does not support`);
  }
  const data = emptyHostData(type, size) as Float32Array | Float64Array | Int32Array | Uint8Array;
  if (tensor.raw_data !== undefined && (tensor.raw_data.length > 0 || size === 0)) {
    const raw = tensor.raw_data;
    if (raw.length !== size * width) {
      throw new OnnxError(
        `${describe(tensor)} has ${raw.length} bytes of raw data for ${size} ${elementTypeName(type)} elements (shape [${shape.join(', ')}])`,
      );
    }
    const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
    if (type === T.FLOAT && (raw.byteOffset & 3) === 0) {
      (data as Float32Array).set(new Float32Array(raw.buffer, raw.byteOffset, size));
    } else {
      for (let i = 0; i < size; i++) data[i] = readRaw(view, type, i);
    }
  } else {
    const values = typedFieldValues(tensor, type);
    if (values.length !== size) {
      throw new OnnxError(`${describe(tensor)} has ${values.length} values for shape [${shape.join(', ')}]`);
    }
    data.set(values);
  }
  return { elementType: type, shape, data };
}

/** A `TensorProto` named `name` holding `tensor` (numbers in `raw_data`, strings in `string_data`). */
export function tensorToProto(name: string, tensor: HostTensor): TensorProto {
  const proto: TensorProto = {
    name,
    dims: [...tensor.shape],
    data_type: tensor.elementType,
    float_data: [],
    int32_data: [],
    string_data: [],
    int64_data: [],
    double_data: [],
    uint64_data: [],
    external_data: [],
  };
  if (Array.isArray(tensor.data)) {
    const encoder = new TextEncoder();
    proto.string_data = tensor.data.map((s) => encoder.encode(s));
    return proto;
  }
  const width = BYTES_PER_ELEMENT[tensor.elementType];
  if (width === undefined) throw new OnnxError(`cannot write tensor '${name}' of element type ${elementTypeName(tensor.elementType)}`);
  const values = tensor.data as ArrayLike<number>;
  const raw = new Uint8Array(values.length * width);
  const view = new DataView(raw.buffer);
  for (let i = 0; i < values.length; i++) writeRaw(view, tensor.elementType, i, values[i]!);
  proto.raw_data = raw;
  return proto;
}
