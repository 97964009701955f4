/**
 * Evaluates an ONNX graph node by node with the operator implementations of
 * the registry, on tfjs tensors.
 *
 * Every ONNX tensor name has a slot. Graph inputs hold the tensors they are
 * given; initializers hold their values and become `tf.Variable`s the first
 * time a node uses them as tensors; values known at import (Constant nodes,
 * constant graph inputs, shapes, and whatever a node computes from those
 * alone) are computed right away and held as host values, so they reach the
 * traced graph as constants, never as computations. A node input that must be
 * known at import (a Reshape shape, Slice starts, ...) is read as a host value:
 * when it was computed from initializers, its producing nodes are evaluated
 * again on the initializers' values; when it depends on a graph input, that is
 * an {@link OnnxConstantInputError} naming the input.
 */
import * as tf from '@tensorflow/tfjs';
import { withValuesComputed } from '../backend/values_computed.js';
import { hostTensorFromTf, hostTensorToTf, type HostTensor } from './proto/host_tensor.js';
import { NodeAttributes } from './proto/node_attributes.js';
import { OnnxConstantInputError, OnnxError } from './proto/onnx_errors.js';
import type { GraphProto, NodeProto } from './proto/onnx_proto.js';
import type { OperatorCall, OperatorVersion } from './operators/operator.js';
import { GRAPHCORE_DOMAIN, NEWEST_GRAPHCORE_OPSET, operatorVersion } from './operators/registry.js';
import { tfjsDtypeOf } from './proto/onnx_element_type.js';
import { floatOutputElementType } from './float_output_element_type.js';

/** How a slot's value comes into being. */
type SlotKind = 'input' | 'initializer' | 'constant' | 'computed';

interface Slot {
  readonly name: string;
  readonly kind: SlotKind;
  tensor?: tf.Tensor;
  host?: HostTensor;
  /** For graph inputs: the declared element type; for computed floating-point tensors: the type ONNX gives them. */
  readonly elementType?: number;
  /** For computed slots: the node that computes it. */
  readonly producer?: number;
}

/** The shape and tfjs dtype of an evaluated ONNX tensor. */
export interface TensorInfo {
  readonly shape: readonly number[];
  readonly dtype: tf.DataType;
  /** The ONNX element type, when known (always for floating-point tensors). */
  readonly elementType?: number;
}

/** What the evaluation needs besides the graph. */
export interface GraphEvaluationOptions {
  /** The opset the model imports for the default domain. */
  readonly opset: number;
  /** The tensors of the graph inputs and their ONNX element types, by name. */
  readonly inputs: ReadonlyMap<string, { tensor: tf.Tensor; elementType: number }>;
  /** Initializer values, by name. */
  readonly initializers: ReadonlyMap<string, HostTensor>;
  /** Graph inputs whose values are fixed at import, by name. */
  readonly constantInputs: ReadonlyMap<string, HostTensor>;
  /** Runs the evaluation of one node (the importer names IR annotations after the node with it). */
  readonly nodeScope: <T>(nodeLabel: string, fn: () => T) => T;
  /** The tf.Variable of an initializer used as a tensor. */
  readonly variableFor: (initializerName: string, value: HostTensor) => tf.Variable;
}

/** A node's label: its name, or `OpType_index` for an unnamed node. */
export function nodeLabel(node: NodeProto, index: number): string {
  return node.name || `${node.op_type}_${index}`;
}

/** How messages name a node. */
export function describeNode(node: NodeProto, index: number): string {
  return `node '${nodeLabel(node, index)}' (${node.op_type})`;
}

/** One evaluation of a graph. Call {@link GraphEvaluation.run}, then read tensors by name. */
export class GraphEvaluation {
  private readonly slots = new Map<string, Slot>();

  constructor(
    private readonly graph: GraphProto,
    private readonly options: GraphEvaluationOptions,
  ) {
    for (const [name, value] of options.initializers) this.slots.set(name, { name, kind: 'initializer', host: value });
    for (const [name, value] of options.constantInputs) this.slots.set(name, { name, kind: 'constant', host: value });
    for (const [name, { tensor, elementType }] of options.inputs) this.slots.set(name, { name, kind: 'input', tensor, elementType });
  }

  /** Evaluates every node in order. */
  run(): void {
    this.graph.node.forEach((node, index) => {
      this.options.nodeScope(nodeLabel(node, index), () => this.evaluateNode(node, index));
    });
  }

  /** True if `name` has been used or computed as a tensor (not only known as a host value). */
  isTensor(name: string): boolean {
    return this.slots.get(name)?.tensor !== undefined;
  }

  /** The tensor named `name` (initializers become variables, host values constants). */
  tensor(name: string): tf.Tensor {
    return this.materialize(this.slot(name, `tensor '${name}'`), `tensor '${name}'`);
  }

  /** Shape and dtype of every tensor of the graph, by name. */
  tensorInfo(): Map<string, TensorInfo> {
    const info = new Map<string, TensorInfo>();
    for (const slot of this.slots.values()) {
      const elementType = slot.host?.elementType ?? slot.elementType;
      const typed = elementType === undefined ? {} : { elementType };
      if (slot.tensor) info.set(slot.name, { shape: slot.tensor.shape, dtype: slot.tensor.dtype, ...typed });
      else if (slot.host) info.set(slot.name, { shape: slot.host.shape, dtype: tfjsDtypeOf(slot.host.elementType) ?? 'float32', ...typed });
    }
    return info;
  }

  private slot(name: string, where: string): Slot {
    const slot = this.slots.get(name);
    if (!slot) throw new OnnxError(`${where}: no tensor named '${name}' is computed before it is used`, { location: where });
    return slot;
  }

  private materialize(slot: Slot, where: string): tf.Tensor {
    if (slot.tensor) return slot.tensor;
    const host = slot.host!;
    slot.tensor = slot.kind === 'initializer' ? this.options.variableFor(slot.name, host) : hostTensorToTf(host, `${where}: tensor '${slot.name}'`);
    return slot.tensor;
  }

  private versionOf(node: NodeProto, index: number): OperatorVersion {
    const graphcore = node.domain === GRAPHCORE_DOMAIN;
    const version = operatorVersion(node.op_type ?? '', graphcore ? NEWEST_GRAPHCORE_OPSET : this.options.opset, node.domain);
    if (!version) throw new OnnxError(`${describeNode(node, index)} is not supported at opset ${this.options.opset}`);
    return version;
  }

  private evaluateNode(node: NodeProto, index: number): void {
    const where = describeNode(node, index);
    const version = this.versionOf(node, index);
    const inputs = node.input.filter((name) => name !== '').map((name) => this.slot(name, where));
    const known = 'atImport' in version || inputs.every((s) => s.kind === 'constant');
    const outputs = this.guarded(node, index, () => (known ? this.hostOutputs(version, node, index) : version.run(this.tracedCall(node, index))));
    node.output.forEach((name, i) => {
      if (name === '') return;
      const output = outputs[i];
      if (!output)
        throw new OnnxError(`${where}: output ${i} '${name}' is not computed by poptfjs's implementation`, {
          location: nodeLabel(node, index),
        });
      if (output instanceof tf.Tensor) {
        const typed = output.dtype === 'float32' ? { elementType: floatOutputElementType(this.tracedCall(node, index), i) } : {};
        this.slots.set(name, { name, kind: 'computed', tensor: output, producer: index, ...typed });
      } else this.slots.set(name, { name, kind: 'constant', host: output });
    });
  }

  /** Runs `fn`, turning failures other than ONNX errors into errors that name the node. */
  private guarded<T>(node: NodeProto, index: number, fn: () => T): T {
    try {
      return fn();
    } catch (error) {
      if (error instanceof OnnxError) throw error;
      throw new OnnxError(`${describeNode(node, index)} failed: ${error instanceof Error ? error.message : String(error)}`, {
        location: nodeLabel(node, index),
        cause: error,
      });
    }
  }

  /** The outputs of a node all of whose inputs are known at import, as host values. */
  private hostOutputs(version: OperatorVersion, node: NodeProto, index: number): Array<HostTensor | undefined> {
    // Known values are computed on a backend with values, also while the model is imported with shapes only (to plan it).
    return withValuesComputed(() => {
      const call = this.constantCall(node, index);
      if ('atImport' in version) return version.atImport(call);
      return version.run(call).map((t, i) => (t ? hostTensorFromTf(t, t.dtype === 'float32' ? floatOutputElementType(call, i) : undefined) : undefined));
    });
  }

  /** A call whose inputs are tensors of the slots and whose constant inputs resolve on demand. */
  private tracedCall(node: NodeProto, index: number): OperatorCall {
    const where = describeNode(node, index);
    return this.call(
      node,
      index,
      (slot) => this.materialize(slot, where),
      (slot, i) => this.constantInput(node, index, i, slot),
    );
  }

  /** A call on known values: every input is a host value, uploaded as a constant tensor. */
  private constantCall(node: NodeProto, index: number): OperatorCall {
    const where = describeNode(node, index);
    const hostOf = (slot: Slot, i: number) => this.constantInput(node, index, i, slot);
    return this.call(node, index, (slot, i) => hostTensorToTf(hostOf(slot, i), `${where}: input ${i} '${slot.name}'`, true), hostOf);
  }

  private call(node: NodeProto, index: number, tensorOf: (slot: Slot, i: number) => tf.Tensor, hostOf: (slot: Slot, i: number) => HostTensor): OperatorCall {
    const where = describeNode(node, index);
    const given = (i: number) => i < node.input.length && node.input[i] !== '';
    const slotOf = (i: number) => {
      if (!given(i)) throw new OnnxError(`${where}: required input ${i} is missing`, { location: nodeLabel(node, index) });
      return this.slot(node.input[i]!, where);
    };
    return {
      opType: node.op_type ?? '',
      where,
      opset: this.options.opset,
      attrs: new NodeAttributes(node.attribute, where),
      inputCount: node.input.length,
      outputCount: node.output.length,
      hasInput: given,
      hasOutput: (i) => i < node.output.length && node.output[i] !== '',
      input: (i) => tensorOf(slotOf(i), i),
      optionalInput: (i) => (given(i) ? tensorOf(slotOf(i), i) : undefined),
      constantInput: (i) => hostOf(slotOf(i), i),
      optionalConstantInput: (i) => (given(i) ? hostOf(slotOf(i), i) : undefined),
      fixedInput: (i) => {
        const slot = given(i) ? slotOf(i) : undefined;
        return slot?.kind === 'constant' ? slot.host : undefined;
      },
      inputShape: (i) => {
        const slot = slotOf(i);
        return slot.tensor?.shape ?? slot.host?.shape ?? tensorOf(slot, i).shape;
      },
      inputElementType: (i) => {
        const slot = slotOf(i);
        return slot.host?.elementType ?? slot.elementType;
      },
      inputDtype: (i) => {
        const slot = slotOf(i);
        return slot.tensor?.dtype ?? (slot.host ? tfjsDtypeOf(slot.host.elementType) : undefined) ?? tensorOf(slot, i).dtype;
      },
    };
  }

  /** The host value of input `i` of a node, or an error naming the node, the input and the graph input it depends on. */
  private constantInput(node: NodeProto, index: number, i: number, slot: Slot): HostTensor {
    try {
      return this.hostValue(slot);
    } catch (error) {
      if (!(error instanceof OnnxConstantInputError)) throw error;
      const where = describeNode(node, index);
      throw new OnnxConstantInputError(
        `${where}: input ${i} '${slot.name}' must be known when the model is imported, but it ` +
          (slot.name === error.inputName ? 'is' : `depends on`) +
          ` graph input '${error.inputName}'; give that input's value in constantInputs, or make it an initializer`,
        error.inputName,
        nodeLabel(node, index),
      );
    }
  }

  /** The value of a slot known at import, computing it from initializers and constants when needed. */
  private hostValue(slot: Slot): HostTensor {
    if (slot.host) return slot.host;
    if (slot.kind === 'input') throw new OnnxConstantInputError(`graph input '${slot.name}' is not constant`, slot.name, slot.name);
    const index = slot.producer!;
    const node = this.graph.node[index]!;
    const outputs = this.options.nodeScope(nodeLabel(node, index), () => this.guarded(node, index, () => this.hostOutputs(this.versionOf(node, index), node, index)));
    node.output.forEach((name, i) => {
      const produced = this.slots.get(name);
      if (name !== '' && produced) produced.host = outputs[i];
    });
    return slot.host!;
  }
}
