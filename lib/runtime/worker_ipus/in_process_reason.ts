/**
 * Why an executable cannot run its IPUs on worker threads with the same
 * numbers as in-process execution, if it cannot.
 */
import type { Executable } from '../executable.js';
import type { UnitDataflow } from './unit_dataflow.js';
import { WIRE_DTYPES } from './wire_tensor.js';

/**
 * The reason `executable` runs in-process even with `parallelIpus`, or
 * undefined if worker IPUs give it the same numbers:
 * - stochastic float16 rounding draws random bits inside nodes and in the
 *   main thread's accumulation and optimizer, interleaved in an order the
 *   main thread cannot reproduce ahead of time;
 * - values of dtypes other than float32, int32 and bool cannot cross threads.
 */
export function inProcessReason(executable: Executable, dataflow: UnitDataflow): string | undefined {
  if (executable.numerics?.stochasticRounding) {
    return 'stochastic float16 rounding draws random numbers inside nodes, interleaved with the main thread, in an order worker IPUs cannot reproduce';
  }
  const { graph } = executable;
  const odd = dataflow.crossingValues(graph).find((id) => !WIRE_DTYPES.has(graph.values[id]!.dtype));
  if (odd !== undefined) return `value %${odd} is ${graph.values[odd]!.dtype}, which cannot be passed between threads`;
  return undefined;
}
