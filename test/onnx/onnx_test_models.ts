/**
 * Builds small ONNX models in memory for the ONNX tests, as decoded
 * `ModelProto` objects (the form readModel returns).
 */
import type { HostTensor } from '../../lib/onnx/proto/host_tensor.js';
import type { OnnxModel } from '../../lib/onnx/model_file.js';
import { OnnxElementType } from '../../lib/onnx/proto/onnx_element_type.js';
import { ATTRIBUTE_TYPE, type AttributeProto, type NodeProto, type TensorProto, type ValueInfoProto } from '../../lib/onnx/proto/onnx_proto.js';
import { tensorToProto } from '../../lib/onnx/proto/tensor_proto_data.js';

/** An attribute value: a number (INT if integral, else FLOAT), numbers (INTS), a string, or a tensor. */
export type AttributeValue = number | number[] | string | HostTensor;

function emptyAttribute(name: string, type: number): AttributeProto {
  return { name, type, floats: [], ints: [], strings: [], tensors: [], graphs: [] };
}

function attribute(name: string, value: AttributeValue): AttributeProto {
  if (typeof value === 'number') {
    return Number.isInteger(value) ? { ...emptyAttribute(name, ATTRIBUTE_TYPE.INT), i: value } : { ...emptyAttribute(name, ATTRIBUTE_TYPE.FLOAT), f: value };
  }
  if (Array.isArray(value)) return { ...emptyAttribute(name, ATTRIBUTE_TYPE.INTS), ints: value };
  if (typeof value === 'string') return { ...emptyAttribute(name, ATTRIBUTE_TYPE.STRING), s: new TextEncoder().encode(value) };
  return { ...emptyAttribute(name, ATTRIBUTE_TYPE.TENSOR), t: tensorToProto('', value) };
}

/** A node. */
export function node(opType: string, inputs: string[], outputs: string[], name = '', attrs: Record<string, AttributeValue> = {}): NodeProto {
  return { op_type: opType, input: inputs, output: outputs, name, attribute: Object.entries(attrs).map(([k, v]) => attribute(k, v)) };
}

/** A tensor value's declaration; dims may be symbolic (strings). */
export function tensorValue(name: string, dims: Array<number | string> | undefined, elementType: number = OnnxElementType.FLOAT): ValueInfoProto {
  return {
    name,
    type: {
      tensor_type: {
        elem_type: elementType,
        ...(dims ? { shape: { dim: dims.map((d) => (typeof d === 'number' ? { dim_value: d } : { dim_param: d })) } } : {}),
      },
    },
  };
}

/** A FLOAT host tensor. */
export function floats(shape: number[], values: number[]): HostTensor {
  return { elementType: OnnxElementType.FLOAT, shape, data: Float32Array.from(values) };
}

/** An INT64 host tensor. */
export function int64s(shape: number[], values: number[]): HostTensor {
  return { elementType: OnnxElementType.INT64, shape, data: Float64Array.from(values) };
}

/** A model of one graph at the given default-domain opset. */
export function model(spec: {
  nodes: NodeProto[];
  inputs: ValueInfoProto[];
  outputs: ValueInfoProto[];
  initializers?: Record<string, HostTensor>;
  opset?: number;
}): OnnxModel {
  const initializer: TensorProto[] = Object.entries(spec.initializers ?? {}).map(([name, value]) => tensorToProto(name, value));
  return {
    proto: {
      ir_version: 8,
      opset_import: [{ domain: '', version: spec.opset ?? 17 }],
      producer_name: 'poptfjs-tests',
      metadata_props: [],
      functions: [],
      graph: {
        name: 'test',
        node: spec.nodes,
        initializer,
        sparse_initializer: [],
        input: spec.inputs,
        output: spec.outputs,
        value_info: [],
      },
    },
  };
}
