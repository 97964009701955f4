/**
 * Why an executable cannot run its IPUs on worker threads with the same
 * numbers as in-process execution, if it cannot.
 */
import type { Executable } from '../../executable/executable.js';
import type { UnitDataflow } from './unit_dataflow.js';
import { WIRE_DTYPES } from './wire_tensor.js';
import { POPTFJS_KERNELS } from '../../backend/poptfjs_kernels/kernel_names.js';

/** Kernels that call JavaScript functions registered in the main thread. */
const MAIN_THREAD_KERNELS: ReadonlySet<string> = new Set([POPTFJS_KERNELS.customOp, POPTFJS_KERNELS.customOpGradient, POPTFJS_KERNELS.cpuOp]);

/**
 * The reason `executable` runs in-process even with `parallelIpus`, or
 * undefined if worker IPUs give it the same numbers:
 * - stochastic float16 rounding draws random bits inside nodes and in the
 *   main thread's accumulation and optimizer, interleaved in an order the
 *   main thread cannot reproduce ahead of time;
 * - values of dtypes other than float32, int32 and bool cannot cross threads;
 * - custom op kernels and CPU ops' functions are JavaScript functions
 *   registered in the main thread.
 */
export function inProcessReason(executable: Executable, dataflow: UnitDataflow): string | undefined {
  if (executable.numerics?.stochasticRounding) {
    return 'stochastic float16 rounding draws random numbers inside nodes, interleaved with the main thread, in an order worker IPUs cannot reproduce';
  }
  const { graph } = executable;
  const hosted = graph.nodes.find((n) => MAIN_THREAD_KERNELS.has(n.kernel));
  if (hosted) return `node #${hosted.id} ${hosted.kernel} runs a JavaScript function registered in the main thread`;
  const odd = dataflow.crossingValues(graph).find((id) => !WIRE_DTYPES.has(graph.values[id]!.dtype));
  if (odd !== undefined) return `value %${odd} is ${graph.values[odd]!.dtype}, which cannot be passed between threads`;
  return undefined;
}
