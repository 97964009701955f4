/**
 * Converting between `TensorProto`s and {@link HostTensor}s: the typed data
 * fields (`float_data`, `int64_data`, ...) and little-endian `raw_data` on
 * reading, `raw_data` (or `string_data` for strings) on writing. Data kept in
 * an external file must have been loaded into `raw_data` by the model reader
 * first (see model_file.ts).
 */
import { sizeOf } from '../../ir/graph.js';
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
      view.setFloat32(i * 4, v, true);
      break;
    case T.DOUBLE:
      view.setFloat64(i * 8, v, true);
      break;
    case T.UINT8:
    case T.BOOL:
      view.setUint8(i, v);
      break;
    case T.INT8:
      view.setInt8(i, v);
      break;
    case T.UINT16:
      view.setUint16(i * 2, v, true);
      break;
    case T.INT16:
      view.setInt16(i * 2, v, true);
      break;
    case T.INT32:
      view.setInt32(i * 4, v, true);
      break;
    case T.UINT32:
      view.setUint32(i * 4, v, true);
      break;
    case T.INT64:
      view.setBigInt64(i * 8, clampedBigInt(v, INT64_MIN, INT64_MAX), true);
      break;
    case T.UINT64:
      view.setBigUint64(i * 8, clampedBigInt(v, 0n, UINT64_MAX), true);
      break;
    case T.FLOAT16:
      view.setUint16(i * 2, floatToHalfBits(v), true);
      break;
    case T.BFLOAT16:
      view.setUint16(i * 2, floatToBfloat16Bits(v), true);
      break;
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

/** The highest rank a tensor of a model may have. */
const MAX_RANK = 64;

/** The shape a tensor declares, checked: at most {@link MAX_RANK} non-negative integer dimensions. */
function declaredShape(tensor: TensorProto): number[] {
  const shape = tensor.dims.map(Number);
  if (shape.length > MAX_RANK) throw new OnnxError(`${describe(tensor)} has rank ${shape.length}; at most ${MAX_RANK} is allowed`);
  const bad = shape.findIndex((d) => !Number.isSafeInteger(d) || d < 0);
  if (bad >= 0) throw new OnnxError(`${describe(tensor)} has dimension ${bad} = ${shape[bad]} in shape [${shape.join(', ')}]; dimensions are non-negative integers`);
  return shape;
}

/**
 * The byte width of a numeric element type poptfjs reads; an error naming the
 * tensor for a type it does not support.
 */
function elementWidth(tensor: TensorProto, type: number): number {
  const width = BYTES_PER_ELEMENT[type];
  if (width === undefined) throw new OnnxError(`${describe(tensor)} has element type ${elementTypeName(type)}, which poptfjs does not support`);
  return width;
}

/**
 * The bytes a tensor stored in an external file must have, for its declared
 * shape and element type (an error for a shape or type poptfjs cannot read):
 * compared with the external data before it is read.
 */
export function declaredRawBytes(tensor: TensorProto): number {
  const shape = declaredShape(tensor);
  return sizeOf(shape) * elementWidth(tensor, tensor.data_type ?? T.UNDEFINED);
}

/**
 * Checks that a tensor's data matches its declared shape and element type,
 * without allocating anything: the shape's dimensions, the element type, and
 * the count of strings, raw bytes or typed values stored. Throws an
 * {@link OnnxError} naming the tensor and what is wrong.
 */
export function checkTensorProto(tensor: TensorProto): void {
  const type = tensor.data_type ?? T.UNDEFINED;
  const shape = declaredShape(tensor);
  const size = sizeOf(shape);
  if (tensor.data_location === DATA_LOCATION.EXTERNAL && tensor.raw_data === undefined) {
    throw new OnnxError(`${describe(tensor)} keeps its data in an external file that was not loaded; read the model from its file with readModel`);
  }
  if (type === T.STRING) {
    if (tensor.string_data.length !== size) {
      throw new OnnxError(`${describe(tensor)} has ${tensor.string_data.length} strings for shape [${shape.join(', ')}]`);
    }
    return;
  }
  const width = elementWidth(tensor, type);
  if (tensor.raw_data !== undefined && (tensor.raw_data.length > 0 || size === 0)) {
    if (tensor.raw_data.length !== size * width) {
      throw new OnnxError(`${describe(tensor)} has ${tensor.raw_data.length} bytes of raw data for ${size} ${elementTypeName(type)} elements (shape [${shape.join(', ')}])`);
    }
    return;
  }
  const values = typedFieldValues(tensor, type).length;
  if (values !== size) throw new OnnxError(`${describe(tensor)} has ${values} values for shape [${shape.join(', ')}]`);
}

/** The host tensor a `TensorProto` holds (checked first: see {@link checkTensorProto}). */
export function tensorFromProto(tensor: TensorProto): HostTensor {
  checkTensorProto(tensor);
  const type = tensor.data_type ?? T.UNDEFINED;
  const shape = tensor.dims.map(Number);
  const size = sizeOf(shape);
  if (type === T.STRING) {
    const decoder = new TextDecoder();
    return { elementType: type, shape, data: tensor.string_data.map((s) => decoder.decode(s)) };
  }
  const data = emptyHostData(type, size) as Float32Array | Float64Array | Int32Array | Uint8Array;
  if (tensor.raw_data !== undefined && (tensor.raw_data.length > 0 || size === 0)) {
    const raw = tensor.raw_data;
    const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
    if (type === T.FLOAT && (raw.byteOffset & 3) === 0) {
      (data as Float32Array).set(new Float32Array(raw.buffer, raw.byteOffset, size));
    } else {
      for (let i = 0; i < size; i++) data[i] = readRaw(view, type, i);
    }
  } else {
    data.set(typedFieldValues(tensor, type));
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
