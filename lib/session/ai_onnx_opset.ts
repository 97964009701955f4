/**
 * `builder.aiOnnx`: a method for each ONNX operator poptfjs imports, named
 * as in PopART (the operator type in lower case: `add`, `conv`,
 * `globalaveragepool`, ...). Each takes the input tensor ids, the node's
 * attributes as an object (PopART's keyword arguments) and an optional debug
 * name, and returns the output's tensor id:
 *
 * ```ts
 * const y = builder.aiOnnx.conv([x, w], { pads: [1, 1, 1, 1], strides: [1, 1] });
 * const [a, b] = builder.aiOnnx.split([y], 2, { axis: 1 });
 * ```
 *
 * Operators with several outputs (`split`, `topk`, `lstm`, `gru`, `rnn`,
 * `dynamicquantizelinear`) take the number of outputs wanted after the inputs
 * and return their ids.
 */
import { PopartException } from '../common/errors.js';
import { supportedOperatorTypes } from '../onnx/operators/registry.js';
import type { AttributeValue } from './builder_values.js';

/** The name of a tensor in the model being built. */
export type TensorId = string;

/** The attributes of a node, by name. */
export type OnnxAttributes = Readonly<Record<string, AttributeValue>>;

/** An operator with one output (or whose first output is the one wanted). */
export type OnnxOperator = (inputs: readonly TensorId[], attributes?: OnnxAttributes, debugName?: string) => TensorId;

/** An operator with several outputs: `numOutputs` of them are returned. */
export type MultiOutputOnnxOperator = (inputs: readonly TensorId[], numOutputs: number, attributes?: OnnxAttributes, debugName?: string) => TensorId[];

/** The operators of `builder.aiOnnx`. */
export type AiOnnxOpset = Readonly<Record<string, OnnxOperator>> & {
  /** Split: `split(inputs, numOutputs, { axis, split })`. */
  readonly split: MultiOutputOnnxOperator;
  /** TopK: values and indices, `topk([x, k], 2, { axis, largest, sorted })`. */
  readonly topk: MultiOutputOnnxOperator;
  /** LSTM: `Y`, `Y_h`, `Y_c`. */
  readonly lstm: MultiOutputOnnxOperator;
  /** GRU: `Y`, `Y_h`. */
  readonly gru: MultiOutputOnnxOperator;
  /** RNN: `Y`, `Y_h`. */
  readonly rnn: MultiOutputOnnxOperator;
  /** DynamicQuantizeLinear: `y`, `y_scale`, `y_zero_point`. */
  readonly dynamicquantizelinear: MultiOutputOnnxOperator;
};

/** Adds a node and returns its output ids. */
export type NodeAdder = (opType: string, inputs: readonly TensorId[], outputs: number, attributes: OnnxAttributes, debugName: string | undefined) => TensorId[];

const MULTI_OUTPUT = new Set(['split', 'topk', 'lstm', 'gru', 'rnn', 'dynamicquantizelinear']);

/** The `aiOnnx` object of a builder, adding nodes with `addNode`. */
export function aiOnnxOpset(addNode: NodeAdder): AiOnnxOpset {
  const opTypes = new Map(supportedOperatorTypes().map((opType) => [opType.toLowerCase(), opType]));
  const operators = new Map<string, OnnxOperator | MultiOutputOnnxOperator>();
  for (const [method, opType] of opTypes) {
    operators.set(
      method,
      MULTI_OUTPUT.has(method)
        ? (inputs: readonly TensorId[], numOutputs: number, attributes: OnnxAttributes = {}, debugName?: string) => addNode(opType, inputs, numOutputs, attributes, debugName)
        : (inputs: readonly TensorId[], attributes: OnnxAttributes = {}, debugName?: string) => addNode(opType, inputs, 1, attributes, debugName)[0]!,
    );
  }
  return new Proxy(
    {},
    {
      get(_target, name) {
        if (typeof name !== 'string') return undefined;
        const operator = operators.get(name);
        if (operator) return operator;
        throw new PopartException(`builder.aiOnnx has no operator '${name}'; it has ${[...operators.keys()].join(', ')}`);
      },
      has: (_target, name) => typeof name === 'string' && operators.has(name),
      ownKeys: () => [...operators.keys()],
      getOwnPropertyDescriptor: (_target, name) =>
        typeof name === 'string' && operators.has(name) ? { value: operators.get(name), enumerable: true, configurable: true } : undefined,
    },
  ) as AiOnnxOpset;
}
