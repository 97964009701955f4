/**
 * The ONNX protobuf messages poptfjs reads and writes, decoded to plain
 * objects.
 *
 * The schema is the official onnx.proto, loaded with protobufjs from its
 * generated JSON descriptor. Decoded messages keep the .proto's field names
 * (`op_type`, `raw_data`, ...); 64-bit integers become JavaScript numbers
 * (exact up to 2^53, which covers every shape and index; larger values such
 * as INT64_MAX slice ends round to the nearest double), `bytes` fields stay
 * `Uint8Array`s, and fields absent from the message are absent from the
 * object. The interfaces below name the fields poptfjs uses; the objects
 * carry every other field too, so a model written back keeps them.
 */
import protobuf from 'protobufjs';
import { ONNX_PROTO_DESCRIPTOR } from './generated/onnx_proto_descriptor.js';

/** `StringStringEntryProto`: a key/value pair (metadata, external data locations). */
export interface StringStringEntryProto {
  key?: string;
  value?: string;
}

/** `OperatorSetIdProto`: an operator set the model imports. */
export interface OperatorSetIdProto {
  /** '' or 'ai.onnx' for the default operator set. */
  domain?: string;
  version?: number;
}

/** `TensorProto`: a tensor's type, shape and data. */
export interface TensorProto {
  dims: number[];
  /** A {@link OnnxElementType} value. */
  data_type?: number;
  name?: string;
  doc_string?: string;
  float_data: number[];
  int32_data: number[];
  string_data: Uint8Array[];
  int64_data: number[];
  double_data: number[];
  uint64_data: number[];
  raw_data?: Uint8Array;
  /** `location`, `offset`, `length` (and `checksum`) of data held in a file beside the model. */
  external_data: StringStringEntryProto[];
  /** 0 = DEFAULT (data in this message), 1 = EXTERNAL. */
  data_location?: number;
}

/** `TensorShapeProto.Dimension`: a fixed size, a named (symbolic) size, or unknown. */
export interface TensorShapeDimension {
  dim_value?: number;
  dim_param?: string;
  denotation?: string;
}

/** `TypeProto`: the type of a value; poptfjs handles tensor types. */
export interface TypeProto {
  tensor_type?: {
    elem_type?: number;
    shape?: { dim: TensorShapeDimension[] };
  };
  sequence_type?: unknown;
  map_type?: unknown;
  optional_type?: unknown;
  sparse_tensor_type?: unknown;
  denotation?: string;
}

/** `ValueInfoProto`: a named value with its type. */
export interface ValueInfoProto {
  name?: string;
  type?: TypeProto;
  doc_string?: string;
}

/** `AttributeProto`: one attribute of a node; `type` says which field holds it. */
export interface AttributeProto {
  name?: string;
  ref_attr_name?: string;
  type?: number;
  f?: number;
  i?: number;
  s?: Uint8Array;
  t?: TensorProto;
  g?: GraphProto;
  floats: number[];
  ints: number[];
  strings: Uint8Array[];
  tensors: TensorProto[];
  graphs: GraphProto[];
}

/** `NodeProto`: one operator call. */
export interface NodeProto {
  input: string[];
  output: string[];
  name?: string;
  op_type?: string;
  domain?: string;
  attribute: AttributeProto[];
  doc_string?: string;
}

/** `GraphProto`: nodes in topological order, with their inputs, outputs and weights. */
export interface GraphProto {
  node: NodeProto[];
  name?: string;
  initializer: TensorProto[];
  sparse_initializer: unknown[];
  doc_string?: string;
  input: ValueInfoProto[];
  output: ValueInfoProto[];
  value_info: ValueInfoProto[];
}

/** `ModelProto`: the top-level ONNX message. */
export interface ModelProto {
  ir_version?: number;
  opset_import: OperatorSetIdProto[];
  producer_name?: string;
  producer_version?: string;
  domain?: string;
  model_version?: number;
  doc_string?: string;
  graph?: GraphProto;
  metadata_props: StringStringEntryProto[];
  functions: unknown[];
}

/** The values of `AttributeProto.AttributeType`. */
export const ATTRIBUTE_TYPE = {
  UNDEFINED: 0,
  FLOAT: 1,
  INT: 2,
  STRING: 3,
  TENSOR: 4,
  GRAPH: 5,
  SPARSE_TENSOR: 11,
  TYPE_PROTO: 13,
  FLOATS: 6,
  INTS: 7,
  STRINGS: 8,
  TENSORS: 9,
  GRAPHS: 10,
  SPARSE_TENSORS: 12,
  TYPE_PROTOS: 14,
} as const;

/** The values of `TensorProto.DataLocation`. */
export const DATA_LOCATION = { DEFAULT: 0, EXTERNAL: 1 } as const;

const root = protobuf.Root.fromJSON(ONNX_PROTO_DESCRIPTOR);
const modelType = root.lookupType('onnx.ModelProto');
const tensorType = root.lookupType('onnx.TensorProto');

const TO_OBJECT: protobuf.IConversionOptions = { longs: Number, enums: Number, arrays: true, defaults: false };

/** Decodes a serialized `ModelProto`. */
export function decodeModelProto(bytes: Uint8Array): ModelProto {
  return modelType.toObject(modelType.decode(bytes), TO_OBJECT) as unknown as ModelProto;
}

/** Serializes a `ModelProto` (a decoded one, possibly modified, or one built from scratch). */
export function encodeModelProto(model: ModelProto): Uint8Array {
  return modelType.encode(modelType.fromObject(model as unknown as Record<string, unknown>)).finish();
}

/** Decodes a serialized `TensorProto` (the `input_0.pb` files of the ONNX backend tests). */
export function decodeTensorProto(bytes: Uint8Array): TensorProto {
  return tensorType.toObject(tensorType.decode(bytes), TO_OBJECT) as unknown as TensorProto;
}

/** Serializes a `TensorProto`. */
export function encodeTensorProto(tensor: TensorProto): Uint8Array {
  return tensorType.encode(tensorType.fromObject(tensor as unknown as Record<string, unknown>)).finish();
}
