/**
 * The IR graph as a protobuf `Graph` message, and back. Constants are stored
 * as raw little-endian tensors; kernel attributes as `AttrValue` trees, so
 * every number (NaN, infinities, -0) comes back exactly. A decoded graph is
 * checked for references that point nowhere, so a graph read from a file
 * cannot make the interpreter fail on a missing value.
 */
import { PoptfjsError } from '../common/errors.js';
import {
  constantData,
  DEFAULT_CYCLE_BACK_OFF,
  type AttrValue,
  type Graph,
  type MultiConvMember,
  type Node,
  type NodeAnnotations,
  type Value,
  type ValueSource,
} from '../ir/graph.js';
import {
  PassMessage,
  type AttrEntryMessage,
  type AttrValueMessage,
  type GraphMessage,
  type HostOverlapMarkMessage,
  type MultiConvMemberMessage,
  type NodeAnnotationsMessage,
  type ValueMessage,
} from './executable_proto.js';
import { checkedDtype, checkedShape } from './declared_tensor.js';
import { checkNodeShapes } from './graph_shape_check.js';
import { isOverlapMode, type HostOverlapMark } from '../ir/host_overlap.js';
import { tensorData, tensorMessage } from './tensor_bytes.js';
import { nameRecord } from '../common/name_record.js';
import { POPTFJS_KERNELS } from '../backend/kernel_catalogue/kernel_catalogue.js';

/** A host overlap mark read from a file, checked. */
function hostOverlapMark(m: HostOverlapMarkMessage, where: string): HostOverlapMark {
  if (!['input', 'output', 'loss'].includes(m.of) || !isOverlapMode(m.mode) || m.mode === 'NoOverlap') {
    throw fileError(
      where,
      `a host overlap mark of '${m.of}' ${m.index} with mode '${m.mode}' (expected an input, output or loss marked OverlapAccumulationLoop or OverlapDeviceIterationLoop)`,
    );
  }
  return { of: m.of as HostOverlapMark['of'], index: m.index, mode: m.mode };
}

function fileError(where: string, message: string): PoptfjsError {
  return new PoptfjsError(`${where}: ${message}`, { type: 'file' });
}

function attrMessage(value: AttrValue): AttrValueMessage {
  if (value === null) return { null_value: true };
  if (typeof value === 'boolean') return { bool_value: value };
  if (typeof value === 'number') return { number_value: value };
  if (typeof value === 'string') return { string_value: value };
  if (Array.isArray(value)) return { list_value: { items: value.map(attrMessage) } };
  return { map_value: { entries: attrEntries(value) } };
}

function attrEntries(attrs: Readonly<Record<string, AttrValue>>): AttrEntryMessage[] {
  return Object.entries(attrs).map(([key, value]) => ({ key, value: attrMessage(value) }));
}

/** The value of an attribute; `where` names it in errors (made only for an error). */
function attrValue(message: AttrValueMessage | undefined, where: () => string): AttrValue {
  if (message === undefined) throw fileError(where(), 'attribute without a value');
  if (message.null_value !== undefined) return null;
  if (message.bool_value !== undefined) return message.bool_value;
  if (message.number_value !== undefined) return message.number_value;
  if (message.string_value !== undefined) return message.string_value;
  if (message.list_value !== undefined) return message.list_value.items.map((item) => attrValue(item, where));
  if (message.map_value !== undefined) return attrRecord(message.map_value.entries, where);
  throw fileError(where(), 'attribute without a value');
}

/** The attributes of entries, as own properties (a key such as `__proto__` is a key like any other). */
function attrRecord(entries: readonly AttrEntryMessage[], where: () => string): Record<string, AttrValue> {
  return Object.fromEntries(entries.map((entry) => [entry.key, attrValue(entry.value, () => `${where()} attribute '${entry.key}'`)]));
}

function valueMessage(value: Value): ValueMessage {
  const base = { id: value.id, shape: [...value.shape], dtype: value.dtype, ...(value.precision !== undefined ? { precision: value.precision } : {}) };
  const s = value.source;
  switch (s.kind) {
    case 'input':
      return { ...base, input: { index: s.index, name: s.name } };
    case 'param':
      return { ...base, param: { name: s.name, trainable: s.trainable } };
    case 'constant':
      return { ...base, constant: tensorMessage({ shape: value.shape, dtype: value.dtype, data: constantData(value) }) };
    case 'node':
      return { ...base, node: { node: s.node, output: s.output } };
  }
}

function annotationsMessage(a: NodeAnnotations): NodeAnnotationsMessage {
  return {
    pass: a.pass === 'forward' ? PassMessage.FORWARD : PassMessage.BACKWARD,
    ...(a.layer !== undefined ? { layer: a.layer } : {}),
    ...(a.gradOf !== undefined ? { grad_of: a.gradOf } : {}),
    ...(a.block !== undefined ? { block: a.block } : {}),
    ...(a.ipu !== undefined ? { ipu: a.ipu } : {}),
    ...(a.loss !== undefined ? { loss: a.loss } : {}),
    ...(a.checkpoint !== undefined ? { checkpoint: a.checkpoint } : {}),
    ...(a.scope !== undefined ? { scope: a.scope } : {}),
    ...(a.availableMemoryProportion !== undefined ? { available_memory_proportion: a.availableMemoryProportion } : {}),
    ...(a.partialsType !== undefined ? { partials_type: a.partialsType } : {}),
    ...(a.multiConv
      ? {
          multi_conv: {
            group: a.multiConv.group,
            index: a.multiConv.index,
            plan_type: a.multiConv.planType,
            per_conv_reserved_tiles: a.multiConv.perConvReservedTiles,
            cycle_back_off: a.multiConv.cycleBackOff,
            ...(a.multiConv.dithering ? { dithering: true } : {}),
          },
        }
      : {}),
    ...(a.source !== undefined ? { source: a.source } : {}),
    attributes: Object.entries(a.attributes ?? {}).flatMap(([attribute, values]) => Object.entries(values).map(([key, value]) => ({ attribute, key, value }))),
  };
}

/** The partials type of a node read from a file, checked. */
function partialsType(type: string, where: string, at: () => string): 'float' | 'half' {
  if (type !== 'float' && type !== 'half') throw fileError(where, `${at()} has unknown partials type '${type}'`);
  return type;
}

/** The `ops.MultiConv` group of a node read from a file, checked. */
function multiConvMember(m: MultiConvMemberMessage, where: string, at: () => string): MultiConvMember {
  if (m.plan_type !== 'Parallel' && m.plan_type !== 'Serial') throw fileError(where, `${at()} has unknown multi-convolution plan type '${m.plan_type}'`);
  const cycleBackOff = m.cycle_back_off ?? DEFAULT_CYCLE_BACK_OFF;
  if (!(cycleBackOff >= 0 && cycleBackOff <= 1)) throw fileError(where, `${at()} has a multi-convolution cycle back-off of ${cycleBackOff}, outside [0, 1]`);
  return { group: m.group, index: m.index, planType: m.plan_type, perConvReservedTiles: m.per_conv_reserved_tiles, cycleBackOff, ...(m.dithering ? { dithering: true } : {}) };
}

/** The annotations of a node read from a file, whose pass is checked; `at` names the node in errors. */
function nodeAnnotations(a: NodeAnnotationsMessage, where: string, at: () => string): NodeAnnotations {
  const annotations: NodeAnnotations = { pass: a.pass === PassMessage.FORWARD ? 'forward' : 'backward' };
  if (a.layer !== undefined) annotations.layer = a.layer;
  if (a.grad_of !== undefined) annotations.gradOf = a.grad_of;
  if (a.block !== undefined) annotations.block = a.block;
  if (a.ipu !== undefined) annotations.ipu = a.ipu;
  if (a.loss !== undefined) annotations.loss = a.loss;
  if (a.checkpoint !== undefined) annotations.checkpoint = a.checkpoint;
  if (a.scope !== undefined) annotations.scope = a.scope;
  if (a.available_memory_proportion !== undefined) annotations.availableMemoryProportion = a.available_memory_proportion;
  if (a.partials_type !== undefined) annotations.partialsType = partialsType(a.partials_type, where, at);
  if (a.multi_conv) annotations.multiConv = multiConvMember(a.multi_conv, where, at);
  if (a.source !== undefined) annotations.source = a.source;
  if (a.attributes.length > 0) {
    const attributes: Record<string, Record<string, string>> = {};
    for (const { attribute, key, value } of a.attributes) (attributes[attribute] ??= {})[key] = value;
    annotations.attributes = attributes;
  }
  return annotations;
}

/** The `Graph` message of a graph. */
export function graphMessage(graph: Graph): GraphMessage {
  return {
    values: graph.values.map(valueMessage),
    nodes: graph.nodes.map((n) => ({
      id: n.id,
      kernel: n.kernel,
      positional_inputs: n.inputNames === null,
      input_names: n.inputNames ? [...n.inputNames] : [],
      inputs: [...n.inputs],
      attrs: attrEntries(n.attrs),
      outputs: [...n.outputs],
      annotations: annotationsMessage(n.annotations),
      bodies: (n.bodies ?? []).map(graphMessage),
    })),
    inputs: [...graph.inputs],
    roles: {
      outputs: [...graph.roles.outputs],
      ...(graph.roles.loss !== undefined ? { loss: graph.roles.loss } : {}),
      ...(graph.roles.gradients ? { gradients: { entries: Object.entries(graph.roles.gradients).map(([param, value]) => ({ param, value })) } } : {}),
      ...(graph.roles.lossScale !== undefined ? { loss_scale: graph.roles.lossScale } : {}),
      ...(graph.roles.hostOverlap ? { host_overlap: graph.roles.hostOverlap.map((m) => ({ ...m })) } : {}),
    },
    assignments: graph.assignments.map((a) => ({ param: a.param, value: a.value })),
  };
}

/**
 * Checks that the bodies of a control-flow node fit it (see `POPTFJS_KERNELS`):
 * a loop's one body takes the node's inputs and returns one value per
 * output; a cond's two bodies share the inputs after the condition and each
 * return one value per output.
 */
function checkBodies(kernel: string, inputCount: number, outputCount: number, bodies: readonly Graph[], where: string): void {
  const fits =
    kernel === POPTFJS_KERNELS.forLoop
      ? bodies.length === 1 && bodies[0]!.inputs.length === inputCount && bodies[0]!.roles.outputs.length === outputCount
      : kernel === POPTFJS_KERNELS.cond
        ? bodies.length === 2 && bodies[0]!.inputs.length + bodies[1]!.inputs.length === inputCount - 1 && bodies.every((b) => b.roles.outputs.length === outputCount)
        : false;
  if (!fits) {
    const shapes = bodies.map((b) => `${b.inputs.length} input(s) and ${b.roles.outputs.length} output(s)`).join('; ');
    throw fileError(where, `has ${bodies.length} body graph(s) (${shapes}) that do not fit a ${kernel} node of ${inputCount} input(s) and ${outputCount} output(s)`);
  }
}

function sameShape(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

/**
 * Parses the graph of a `Graph` message, checking every reference, that each
 * node reads only values made before it, every declared shape and dtype, and
 * that each node's outputs have the shapes its kernel makes of its inputs
 * (see graph_shape_check.ts); `where` names it in errors.
 */
export function graphFromMessage(message: GraphMessage, where: string): Graph {
  const valueCount = message.values.length;
  const nodeCount = message.nodes.length;
  const valueRef = (id: number, what: () => string): number => {
    if (!Number.isInteger(id) || id < 0 || id >= valueCount) throw fileError(where, `${what()} refers to value %${id}, but the graph has ${valueCount} values`);
    return id;
  };
  const values: Value[] = message.values.map((v, i) => {
    const at = () => `${where} value %${i}`;
    if (v.id !== i) throw fileError(where, `value ${i} has id ${v.id}`);
    const dtype = checkedDtype(v.dtype, at);
    const shape = checkedShape(v.shape, at);
    let source: ValueSource;
    if (v.input) source = { kind: 'input', index: v.input.index, name: v.input.name };
    else if (v.param) source = { kind: 'param', name: v.param.name, trainable: v.param.trainable };
    else if (v.constant) {
      const constant = tensorData(v.constant, at());
      if (constant.dtype !== dtype || !sameShape(constant.shape, shape)) {
        throw fileError(where, `value %${i} is ${dtype}[${shape.join(',')}], but its constant holds ${constant.dtype}[${constant.shape.join(',')}]`);
      }
      source = { kind: 'constant', data: constant.data };
    } else if (v.node) {
      if (v.node.node >= nodeCount) throw fileError(where, `value %${i} is made by node #${v.node.node}, but the graph has ${nodeCount} nodes`);
      if (message.nodes[v.node.node]!.outputs[v.node.output] !== i)
        throw fileError(where, `value %${i} is output ${v.node.output} of node #${v.node.node}, which does not make it`);
      source = { kind: 'node', node: v.node.node, output: v.node.output };
    } else throw fileError(where, `value %${i} has no source`);
    if (v.precision === undefined) return { id: i, shape, dtype, source };
    if (v.precision !== 'float16') throw fileError(where, `value %${i} has unknown precision '${v.precision}'`);
    return { id: i, shape, dtype, source, precision: v.precision };
  });
  const nodes: Node[] = message.nodes.map((n, i) => {
    const at = () => `node #${i} (${n.kernel})`;
    if (n.id !== i) throw fileError(where, `node ${i} has id ${n.id}`);
    const a = n.annotations;
    if (!a || (a.pass !== PassMessage.FORWARD && a.pass !== PassMessage.BACKWARD)) throw fileError(where, `${at()} has no pass annotation`);
    if (!n.positional_inputs && n.input_names.length !== n.inputs.length) {
      throw fileError(where, `${at()} has ${n.inputs.length} inputs but ${n.input_names.length} input names`);
    }
    for (let k = 0; k < n.outputs.length; k++) {
      const id = n.outputs[k]!;
      const source = values[valueRef(id, () => `${at()} output ${k}`)]!.source;
      if (source.kind !== 'node' || source.node !== i || source.output !== k) throw fileError(where, `${at()} output ${k} is %${id}, which another source makes`);
    }
    const annotations = nodeAnnotations(a, where, at);
    for (let k = 0; k < n.inputs.length; k++) {
      const id = n.inputs[k]!;
      const source = values[valueRef(id, () => `${at()} input ${k}`)]!.source;
      if (source.kind === 'node' && source.node >= i) throw fileError(where, `${at()} input ${k} is %${id}, which node #${source.node} makes after it`);
    }
    const bodies = n.bodies.map((body, k) => graphFromMessage(body, `${where} ${at()} body ${k}`));
    if (bodies.length > 0) checkBodies(n.kernel, n.inputs.length, n.outputs.length, bodies, `${where} ${at()}`);
    const node: Node = {
      id: i,
      kernel: n.kernel,
      inputNames: n.positional_inputs ? null : n.input_names,
      inputs: n.inputs,
      attrs: attrRecord(n.attrs, () => `${where} ${at()}`),
      outputs: n.outputs,
      annotations,
    };
    return bodies.length > 0 ? { ...node, bodies } : node;
  });
  const inputs = message.inputs.map((id, k) => valueRef(id, () => `graph input ${k}`));
  const roles = message.roles;
  if (!roles) throw fileError(where, 'the graph has no roles');
  checkNodeShapes(values, nodes, where);
  return {
    values,
    nodes,
    inputs,
    roles: {
      outputs: roles.outputs.map((id, k) => valueRef(id, () => `output ${k}`)),
      ...(roles.loss !== undefined ? { loss: valueRef(roles.loss, () => 'the loss') } : {}),
      ...(roles.gradients ? { gradients: nameRecord(roles.gradients.entries.map((e) => [e.param, valueRef(e.value, () => `the gradient of '${e.param}'`)])) } : {}),
      ...(roles.loss_scale !== undefined ? { lossScale: valueRef(roles.loss_scale, () => 'the loss scale') } : {}),
      ...(roles.host_overlap && roles.host_overlap.length > 0 ? { hostOverlap: roles.host_overlap.map((m) => hostOverlapMark(m, where)) } : {}),
    },
    assignments: message.assignments.map((a) => ({ param: a.param, value: valueRef(a.value, () => `the assignment of '${a.param}'`) })),
  };
}
