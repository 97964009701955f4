/**
 * Which values of a graph are float16: the dtype flow of PyTorch's type
 * promotion, applied to the IR after tracing.
 *
 * Every float32 value is float16 (`half`), float32 (`float`) or `weak`:
 * - declared float16 parameters and inputs are half, other parameters and
 *   inputs float; the loss-scale input, single-element constants, the
 *   constants and fills only the backward pass reads (the ones and scales tfjs's
 *   gradient functions make, which PyTorch's autograd makes in the
 *   gradient's dtype) and random draws (a dropout mask is drawn in its
 *   input's dtype in PyTorch) are weak (like Python numbers in PyTorch, they
 *   do not decide the precision of an op);
 * - a node's result follows its float32 inputs: half if some are half and
 *   none is float, float32 weights (parameters and values made from them
 *   only) counting as half there, as PopTorch converts them (see
 *   {@link float32WeightValues}); when half and float inputs mix, float
 *   (`HalfUpcastToFloat`, PyTorch's rule) or half (`FloatDowncastToHalf`, the
 *   float inputs are rounded to float16 first); float if its inputs are float
 *   or weak; weak if all are weak; float when it has no float32 input;
 * - in the backward pass, the gradient of a node that computed in float16
 *   is float16 when it meets float16 values: PyTorch's autograd gives each
 *   gradient the dtype of the value it differentiates, so the backward pass
 *   of a float16 model runs in float16 even when its loss is float32;
 * - the gradient of a float16 parameter is float16 (as in PyTorch, a
 *   parameter's gradient has the parameter's dtype);
 * - the output of a float16 cast (`half(x)` of a value the model computes)
 *   is half.
 * Half values are flagged `precision: 'float16'` in the graph; the
 * interpreter rounds them (see `withFloat16Arithmetic`).
 */
import type { Graph, Value, ValueId } from '../ir/graph.js';
import { sizeOf } from '../ir/graph.js';
import { HalfFloatCastingBehavior } from '../option_vocabulary/enums.js';
import { KERNEL_CATALOGUE } from '../backend/kernel_catalogue/kernel_catalogue.js';

/** What the user declared float16, and how mixed ops are cast. */
export interface Float16Declarations {
  /** Names of the parameters held in float16. */
  readonly params: ReadonlySet<string>;
  /** Positions (`source.index`) of the graph inputs declared float16. */
  readonly inputs: ReadonlySet<number>;
  /** How an op mixing float16 and float32 inputs computes. */
  readonly casting: HalfFloatCastingBehavior;
}

function isFloat(value: Value): boolean {
  return value.dtype === 'float32';
}

/**
 * The weak float32 values of `graph`: the loss-scale input, single-element
 * constants, constants and fills read by the backward pass only, random
 * draws, and results computed from weak values only.
 */
export function weakFloatValues(graph: Graph): Set<ValueId> {
  const weak = new Set<ValueId>();
  const readInForward = new Set<ValueId>();
  for (const node of graph.nodes) if (node.annotations.pass === 'forward') for (const id of node.inputs) readInForward.add(id);
  for (const v of graph.values) {
    if (!isFloat(v)) continue;
    const constant = v.source.kind === 'constant';
    if ((constant && (sizeOf(v.shape) === 1 || !readInForward.has(v.id))) || v.id === graph.roles.lossScale) weak.add(v.id);
  }
  for (const node of graph.nodes) {
    const floats = node.inputs.filter((id) => isFloat(graph.values[id]!));
    const precision = KERNEL_CATALOGUE.get(node.kernel)?.precision;
    const weakOutputs = precision === 'weak' || (precision === 'weak-in-backward' && !node.outputs.some((id) => readInForward.has(id)));
    if (weakOutputs || (floats.length > 0 && floats.every((id) => weak.has(id)))) {
      for (const id of node.outputs) if (isFloat(graph.values[id]!)) weak.add(id);
    }
  }
  return weak;
}

/**
 * The float32 weights of `graph` as an op meets them: float32 parameters (not
 * in `halfParams`) and the forward-pass values made from them and weak values
 * only (a transposed or reshaped weight). As in PopTorch, whose float32
 * parameters "will be converted to float16 if you call an operation with a
 * float16 input", an op mixing these with float16 values computes in float16
 * on the weights rounded to float16 (their updates stay float32).
 */
export function float32WeightValues(graph: Graph, halfParams: ReadonlySet<string>, weak: ReadonlySet<ValueId>): Set<ValueId> {
  const weights = new Set<ValueId>();
  for (const v of graph.values) if (isFloat(v) && v.source.kind === 'param' && !halfParams.has(v.source.name)) weights.add(v.id);
  for (const node of graph.nodes) {
    if (node.annotations.pass !== 'forward') continue;
    const floats = node.inputs.filter((id) => isFloat(graph.values[id]!));
    if (floats.some((id) => weights.has(id)) && floats.every((id) => weights.has(id) || weak.has(id))) {
      for (const id of node.outputs) if (isFloat(graph.values[id]!)) weights.add(id);
    }
  }
  return weights;
}

/** `graph` with its float16 values flagged `precision: 'float16'` (values flagged already stay float16). */
// biome-ignore lint/complexity/noExcessiveCognitiveComplexity: one pass deciding each value's precision from the declarations, then each node's from its inputs and the casting rule, read together
export function inferFloat16(graph: Graph, declared: Float16Declarations): Graph {
  const weak = weakFloatValues(graph);
  const weights = float32WeightValues(graph, declared.params, weak);
  const half = new Set<ValueId>();
  for (const v of graph.values) {
    if (!isFloat(v)) continue;
    const source = v.source;
    if (v.precision === 'float16' || (source.kind === 'param' && declared.params.has(source.name)) || (source.kind === 'input' && declared.inputs.has(source.index))) {
      half.add(v.id);
    }
  }
  for (const node of graph.nodes) {
    const floats = node.inputs.filter((id) => isFloat(graph.values[id]!));
    const anyHalf = floats.some((id) => half.has(id));
    const anyFloat = floats.some((id) => !half.has(id) && !weak.has(id) && !weights.has(id));
    const gradOf = node.annotations.pass === 'backward' ? node.annotations.gradOf : undefined;
    const ofHalfNode = gradOf !== undefined && graph.nodes[gradOf]!.outputs.some((id) => half.has(id));
    const downcast = declared.casting === HalfFloatCastingBehavior.FloatDowncastToHalf || ofHalfNode;
    const resultHalf = (anyHalf && (!anyFloat || downcast)) || KERNEL_CATALOGUE.get(node.kernel)?.precision === 'float16';
    if (resultHalf) for (const id of node.outputs) if (isFloat(graph.values[id]!)) half.add(id);
  }
  for (const [name, id] of Object.entries(graph.roles.gradients ?? {})) {
    if (declared.params.has(name) && graph.values[id]!.source.kind === 'node') half.add(id);
  }
  if (half.size === 0) return graph;
  return { ...graph, values: graph.values.map((v) => (half.has(v.id) && v.precision !== 'float16' ? { ...v, precision: 'float16' } : v)) };
}
