/**
 * What a traced model declares float16 with `half`: its float16 parameters
 * and inputs, as the compiler's float16 inference takes them.
 */
import type * as tf from '@tensorflow/tfjs';
import type { TracedModel } from '../trace/trace_model.js';
import { isHalf } from './half.js';

/** The parameters (by name) and inputs (by position) declared float16. */
export interface Float16Declared {
  readonly params: ReadonlySet<string>;
  readonly inputs: ReadonlySet<number>;
}

/**
 * The float16 declarations of a traced model and its example inputs. With
 * `runningStatisticsAlwaysFloat`, parameters the model assigns (batch-norm
 * running statistics) stay float32.
 */
export function float16Declarations(traced: TracedModel, inputs: readonly tf.Tensor[], runningStatisticsAlwaysFloat: boolean): Float16Declared {
  const assigned = new Set(traced.graph.assignments.map((a) => a.param));
  const params = new Set([...traced.variables].filter(([name, v]) => isHalf(v) && !(runningStatisticsAlwaysFloat && assigned.has(name))).map(([name]) => name));
  return { params, inputs: new Set(inputs.flatMap((x, i) => (isHalf(x) ? [i] : []))) };
}
