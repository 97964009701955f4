/**
 * How the simulated device computes nodes with float16 values: the rounding
 * of float16 results, the downcast of float32 inputs under
 * `FloatDowncastToHalf`, float16 partials, stochastic rounding and
 * floating-point exceptions (PopTorch's `opts.Precision`).
 */
import type * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../common/errors.js';
import { paramValues, type Graph, type Node, type ValueId } from '../ir/graph.js';
import { HalfFloatCastingBehavior } from '../option_vocabulary/enums.js';
import type { Float16Arithmetic } from '../executable/float16_arithmetic_settings.js';
import { describeNode } from './node_description.js';
import type { NodeRun } from './run_feeds.js';
import { Float16Rounding } from '../precision/float16_rounding.js';
import { float32WeightValues } from '../precision/float16_inference.js';
import { hasHalfPartials, runWithHalfPartials } from '../precision/half_partials.js';
import { partialsTypeOf } from '../ir/planner_settings.js';

/** 'NaN', 'Inf' or undefined: what non-finite values `t` holds. */
function nonFinite(t: tf.Tensor): 'NaN' | 'Inf' | undefined {
  if (t.dtype !== 'float32') return undefined;
  let inf = false;
  for (const x of t.dataSync() as Float32Array) {
    if (Number.isNaN(x)) return 'NaN';
    if (x === Infinity || x === -Infinity) inf = true;
  }
  return inf ? 'Inf' : undefined;
}

/** Raises a floating-point exception if the node made NaN or Inf that its inputs did not hold. */
function checkFloatingPoint(graph: Graph, node: Node, inputs: readonly tf.Tensor[], outputs: readonly tf.Tensor[]): void {
  const produced = outputs.map(nonFinite);
  if (produced.every((p) => p === undefined)) return;
  const held = new Set(inputs.map(nonFinite));
  produced.forEach((kind, i) => {
    if (!kind || held.has(kind) || (kind === 'Inf' && held.has('NaN'))) return;
    const half = graph.values[node.outputs[i]!]!.precision === 'float16' ? 'float16' : 'float32';
    const what = kind === 'NaN' ? 'NaN (invalid operation)' : 'Inf (overflow or division by zero)';
    throw new PoptfjsError(
      `floating-point exception: ${describeNode(node)} produced ${what} in its ${half} result ${i} from finite inputs; ` +
        `${half === 'float16' ? 'float16 overflows beyond ±65504: use loss scaling with care, keep this op in float32, or ' : ''}` +
        'call opts.Precision.enableFloatingPointExceptions(false) to let Inf and NaN through',
      { type: 'floating_point_exception', location: node.annotations.layer ?? node.kernel },
    );
  });
}

const weightsOf = new WeakMap<Graph, ReadonlySet<ValueId>>();

/** The float32 weights of `graph` (see {@link float32WeightValues}), computed once per graph. */
function graphWeights(graph: Graph, weak: ReadonlySet<ValueId>): ReadonlySet<ValueId> {
  let weights = weightsOf.get(graph);
  if (!weights) {
    const halfParams = new Set([...paramValues(graph)].filter(([, v]) => v.precision === 'float16').map(([name]) => name));
    weights = float32WeightValues(graph, halfParams, weak);
    weightsOf.set(graph, weights);
  }
  return weights;
}

/** The kernels that compare floats: the IPU raises an invalid-operation exception when an operand is NaN. */
const COMPARISON_KERNELS: ReadonlySet<string> = new Set(['Less', 'LessEqual', 'Greater', 'GreaterEqual', 'Equal', 'NotEqual']);

/** Raises a floating-point exception if a comparison node has a NaN operand. */
function checkComparison(node: Node, inputs: readonly tf.Tensor[]): void {
  const operand = inputs.findIndex((t) => nonFinite(t) === 'NaN');
  if (operand < 0) return;
  throw new PoptfjsError(
    `floating-point exception: ${describeNode(node)} compared NaN (invalid operation) in its operand ${operand}; ` +
      'call opts.Precision.enableFloatingPointExceptions(false) to compare NaN without an exception',
    { type: 'floating_point_exception', location: node.annotations.layer ?? node.kernel },
  );
}

/**
 * `run` wrapped with the float16 arithmetic of `node`: float32 inputs are
 * rounded to float16 first when `FloatDowncastToHalf` mixes them with float16
 * inputs (float32 weights whatever the casting), matmuls and convolutions use float16 partials when asked, float16
 * results are rounded (to nearest even, or stochastically with the run's
 * seeded generator), and floating-point exceptions are raised when enabled
 * (also for a comparison with a NaN operand, as on the IPU).
 * Returns `run` itself when the node has nothing to do with any of these.
 */
export function withFloat16Arithmetic(graph: Graph, node: Node, run: NodeRun, arithmetic: Float16Arithmetic, weak: ReadonlySet<ValueId>): NodeRun {
  const values = graph.values;
  const halfOutputs = node.outputs.map((id) => values[id]!.precision === 'float16');
  const producesHalf = halfOutputs.some(Boolean);
  const checksExceptions = arithmetic.floatingPointExceptions && node.outputs.some((id) => values[id]!.dtype === 'float32');
  const checksComparison = arithmetic.floatingPointExceptions && COMPARISON_KERNELS.has(node.kernel);
  if (!producesHalf && !checksExceptions && !checksComparison) return run;
  const isHalf = (id: ValueId) => values[id]!.precision === 'float16';
  const everyFloat = arithmetic.halfFloatCasting === HalfFloatCastingBehavior.FloatDowncastToHalf;
  const weights = producesHalf && !everyFloat ? graphWeights(graph, weak) : undefined;
  const downcast =
    producesHalf && node.inputs.some(isHalf)
      ? node.inputs.map((id) => values[id]!.dtype === 'float32' && !isHalf(id) && !weak.has(id) && (everyFloat || weights!.has(id)))
      : node.inputs.map(() => false);
  const halfPartials =
    producesHalf &&
    (partialsTypeOf(graph, node) ?? (arithmetic.halfPartials ? 'half' : 'float')) === 'half' &&
    hasHalfPartials(node.kernel) &&
    node.inputs.every((id, i) => values[id]!.dtype !== 'float32' || isHalf(id) || downcast[i] || weak.has(id));
  return (inputs, feeds) => {
    if (checksComparison) checkComparison(node, inputs);
    const rounding = new Float16Rounding(arithmetic.stochasticRounding, feeds.random);
    const cast = inputs.map((t, i) => (downcast[i] ? rounding.round(t) : t));
    let outputs: tf.Tensor[];
    try {
      outputs = halfPartials ? [runWithHalfPartials(node, cast, rounding)] : run(cast, feeds);
    } finally {
      cast.forEach((t, i) => downcast[i] && t.dispose());
    }
    const results = outputs.map((t, i) => (halfOutputs[i] ? rounding.replace(t) : t));
    if (checksExceptions) {
      try {
        checkFloatingPoint(graph, node, inputs, results);
      } catch (error) {
        results.forEach((t) => t.dispose());
        throw error;
      }
    }
    return results;
  };
}
