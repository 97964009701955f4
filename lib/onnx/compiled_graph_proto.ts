/**
 * The compiled graph of a wrapped model as an ONNX `ModelProto`, which
 * `POPTFJS_EXPORT_PROTO_FILE` (PopTorch's `POPTORCH_EXPORT_PROTO_FILE`)
 * writes, as PopTorch writes the model proto PopART compiles. Each node is
 * the kernel `executor.irText()` shows, in the domain `ai.tfjs` (tfjs's
 * kernels, `MatMul`, `Relu`, ...) or `ai.poptfjs` (poptfjs's own, as PopART's
 * custom ops are in `ai.graphcore`), with its attributes; a value is named as
 * `irText()` and `Options.anchorTensor` name it (`%12`), inputs and weights
 * by their names, and the weights are initializers holding the values given.
 * The graph's outputs are the model's, then the loss, the gradients
 * (`Gradient___<weight>`, as PopART names them) and the values written to
 * weights; the annotations of a node (layer, pass, block, IPU, ...) are its
 * `doc_string`.
 */
import type * as tf from '@tensorflow/tfjs';
import { writeFileAtomic } from '../files/atomic_file.js';
import type { AttrValue, Graph, Value, ValueId } from '../ir/graph.js';
import { GRADIENT_PREFIX } from '../executable/anchor_names.js';
import { hostTensor, hostTensorFromTf } from './proto/host_tensor.js';
import { ATTRIBUTE_TYPE, encodeModelProto, type AttributeProto, type GraphProto, type ModelProto, type NodeProto, type ValueInfoProto } from './proto/onnx_proto.js';
import { elementTypeOfDtype, OnnxElementType } from './proto/onnx_element_type.js';
import { tensorToProto } from './proto/tensor_proto_data.js';

/** The domain of tfjs's kernels in the exported graph. */
export const TFJS_DOMAIN = 'ai.tfjs';
/** The domain of poptfjs's own kernels (`poptfjs.*` in `irText()`) in the exported graph. */
export const POPTFJS_DOMAIN = 'ai.poptfjs';

const POPTFJS_KERNEL_PREFIX = 'poptfjs.';

function emptyAttribute(name: string): AttributeProto {
  return { name, floats: [], ints: [], strings: [], tensors: [], graphs: [] };
}

/** An IR attribute as an ONNX one: numbers as INT or FLOAT, strings, lists of either, anything else as its JSON text. */
function attribute(name: string, value: AttrValue): AttributeProto {
  const a = emptyAttribute(name);
  const encoder = new TextEncoder();
  if (typeof value === 'boolean' || (typeof value === 'number' && Number.isInteger(value))) return { ...a, type: ATTRIBUTE_TYPE.INT, i: Number(value) };
  if (typeof value === 'number') return { ...a, type: ATTRIBUTE_TYPE.FLOAT, f: value };
  if (typeof value === 'string') return { ...a, type: ATTRIBUTE_TYPE.STRING, s: encoder.encode(value) };
  if (Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'number')) {
    const numbers = value as number[];
    return numbers.every(Number.isInteger) ? { ...a, type: ATTRIBUTE_TYPE.INTS, ints: numbers } : { ...a, type: ATTRIBUTE_TYPE.FLOATS, floats: numbers };
  }
  if (Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'string')) {
    return { ...a, type: ATTRIBUTE_TYPE.STRINGS, strings: (value as string[]).map((s) => encoder.encode(s)) };
  }
  return { ...a, type: ATTRIBUTE_TYPE.STRING, s: encoder.encode(JSON.stringify(value)) };
}

function valueInfo(name: string, v: Value): ValueInfoProto {
  const elemType = v.precision === 'float16' ? OnnxElementType.FLOAT16 : elementTypeOfDtype(v.dtype);
  return { name, type: { tensor_type: { elem_type: elemType, shape: { dim: v.shape.map((d) => ({ dim_value: d })) } } } };
}

/** The name of each value: inputs and weights by theirs, the others as `irText()` shows them (`%12`), after `prefix` in a body. */
function valueName(v: Value, prefix: string): string {
  return v.source.kind === 'input' || v.source.kind === 'param' ? prefix + v.source.name : `${prefix}%${v.id}`;
}

function graphProto(graph: Graph, name: string, weights: ReadonlyMap<string, tf.Tensor>, prefix: string): GraphProto {
  const names = graph.values.map((v) => valueName(v, prefix));
  const initializer = graph.values.flatMap((v) => {
    if (v.source.kind === 'param') {
      const weight = weights.get(v.source.name);
      return weight ? [tensorToProto(names[v.id]!, hostTensorFromTf(weight))] : [];
    }
    if (v.source.kind === 'constant' && v.source.data !== null) return [tensorToProto(names[v.id]!, hostTensor(elementTypeOfDtype(v.dtype), v.shape, v.source.data))];
    return [];
  });
  const node = graph.nodes.map((n): NodeProto => {
    const own = n.kernel.startsWith(POPTFJS_KERNEL_PREFIX);
    const attrs = Object.entries(n.attrs).map(([key, value]) => attribute(key, value));
    if (n.bodies) {
      attrs.push({
        ...emptyAttribute('bodies'),
        type: ATTRIBUTE_TYPE.GRAPHS,
        graphs: n.bodies.map((body, i) => graphProto(body, `${name}_node${n.id}_body${i}`, weights, `${prefix}node${n.id}/body${i}/`)),
      });
    }
    return {
      name: `${prefix}${n.kernel}_${n.id}`,
      op_type: own ? n.kernel.slice(POPTFJS_KERNEL_PREFIX.length) : n.kernel,
      domain: own ? POPTFJS_DOMAIN : TFJS_DOMAIN,
      input: n.inputs.map((id) => names[id]!),
      output: n.outputs.map((id) => names[id]!),
      attribute: attrs,
      doc_string: JSON.stringify(n.annotations),
    };
  });
  const outputs: ValueId[] = [
    ...graph.roles.outputs,
    ...(graph.roles.loss === undefined ? [] : [graph.roles.loss]),
    ...Object.values(graph.roles.gradients ?? {}),
    ...graph.assignments.map((a) => a.value),
  ];
  const gradientOf = new Map(Object.entries(graph.roles.gradients ?? {}).map(([weight, id]) => [id, weight]));
  return {
    name,
    node,
    initializer,
    sparse_initializer: [],
    input: graph.inputs.map((id) => valueInfo(names[id]!, graph.values[id]!)),
    output: [...new Set(outputs)].map((id) => ({ ...valueInfo(names[id]!, graph.values[id]!), doc_string: gradientOf.has(id) ? GRADIENT_PREFIX + gradientOf.get(id) : '' })),
    value_info: graph.values.filter((v) => v.source.kind === 'node').map((v) => valueInfo(names[v.id]!, v)),
  };
}

/** The compiled `graph` as an ONNX model, the weights of `weights` (by name) as its initializers. */
export function compiledGraphProto(graph: Graph, name: string, weights: ReadonlyMap<string, tf.Tensor>): ModelProto {
  return {
    ir_version: 8,
    opset_import: [
      { domain: TFJS_DOMAIN, version: 1 },
      { domain: POPTFJS_DOMAIN, version: 1 },
    ],
    producer_name: 'poptfjs',
    graph: graphProto(graph, name, weights, ''),
    metadata_props: [],
    functions: [],
  };
}

/** Writes the compiled `graph` to `path` (atomically) as an ONNX model: see {@link compiledGraphProto}. */
export function writeCompiledGraphProto(path: string, graph: Graph, name: string, weights: ReadonlyMap<string, tf.Tensor>): void {
  writeFileAtomic(path, encodeModelProto(compiledGraphProto(graph, name, weights)));
}
