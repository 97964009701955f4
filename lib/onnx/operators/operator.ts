/**
 * The shape of an ONNX operator implementation: a small function of tfjs ops
 * that evaluates one node. Implementations are grouped by family (one file
 * each in this folder) and collected in the registry (registry.ts).
 */
import type * as tf from '@tensorflow/tfjs';
import type { HostTensor } from '../proto/host_tensor.js';
import type { NodeAttributes } from '../proto/node_attributes.js';

/** What an implementation sees of the node it evaluates. */
export interface OperatorCall {
  /** The node's operator type, e.g. `Conv`. */
  readonly opType: string;
  /** The node, for messages: `node 'name' (OpType)`. */
  readonly where: string;
  /** The version of the operator set the model imports for the node's domain. */
  readonly opset: number;
  readonly attrs: NodeAttributes;
  /** Number of inputs the node lists (optional inputs may be listed with an empty name). */
  readonly inputCount: number;
  /** Number of outputs the node lists. */
  readonly outputCount: number;
  /** True if input `index` is given. */
  hasInput(index: number): boolean;
  /** True if output `index` is wanted (listed with a non-empty name). */
  hasOutput(index: number): boolean;
  /** Input `index` as a tensor; an error if it is not given. */
  input(index: number): tf.Tensor;
  /** Input `index` as a tensor, or undefined if it is not given. */
  optionalInput(index: number): tf.Tensor | undefined;
  /**
   * The value of input `index`, which must be known when the model is
   * imported (an initializer, a Constant, a shape computation or a constant
   * graph input); an error naming the node and the input otherwise.
   */
  constantInput(index: number): HostTensor;
  /** Like {@link OperatorCall.constantInput}, or undefined if the input is not given. */
  optionalConstantInput(index: number): HostTensor | undefined;
  /**
   * The value of input `index` if it is fixed at import (a constant, not a
   * weight or a graph input), else undefined: lets an implementation do on
   * the host what it would otherwise compute in the graph.
   */
  fixedInput(index: number): HostTensor | undefined;
  /** The shape of input `index`, without computing the input. */
  inputShape(index: number): readonly number[];
  /** The tfjs dtype of input `index`, without computing the input. */
  inputDtype(index: number): tf.DataType;
  /**
   * The ONNX element type of input `index` when it is known (graph inputs,
   * initializers and values known at import), else undefined.
   */
  inputElementType(index: number): number | undefined;
}

/** The outputs of a node, in order; undefined for an optional output that is not computed. */
export type OperatorOutputs = Array<tf.Tensor | undefined>;

/** Evaluates one node with tfjs ops. */
export type OperatorImplementation = (call: OperatorCall) => OperatorOutputs;

/**
 * Computes a node's outputs on the host when the model is imported, from its
 * attributes, its inputs' shapes and its constant inputs (Constant, Shape,
 * ConstantOfShape, Range, ...): the outputs are always known at import.
 */
export type ImportTimeImplementation = (call: OperatorCall) => HostTensor[];

/** One version of an operator: the implementation used from opset `since` until the next version. */
export type OperatorVersion = { readonly since: number; readonly run: OperatorImplementation } | { readonly since: number; readonly atImport: ImportTimeImplementation };

/** A family of operators: versions by operator type, oldest first. */
export type OperatorFamily = Readonly<Record<string, readonly OperatorVersion[]>>;
