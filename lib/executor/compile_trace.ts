/**
 * The trace a compilation starts from, kept within the host's memory: the
 * model is traced with a guard on the host heap after each kernel, the host
 * memory a step of the traced graph needs is estimated (and a step that will
 * not fit refused), and running out of memory while tracing is reported with
 * the model and phase.
 */
import { hostHeap } from '../backend/host_heap.js';
import { causedByOutOfMemory, hostOutOfMemory } from '../runtime/host_memory_error.js';
import type { HostMemoryEstimate } from '../runtime/host_memory_estimate.js';
import type { TracedModel } from '../trace/trace_model.js';
import { traceExecutorModel, type ExecutorTraceRequest } from './executor_trace.js';
import { checkStepHostMemory, hostMemoryContext, traceMemoryGuard, type HostMemoryCheckRequest } from './host_memory_check.js';

/** A traced model and the host memory a step of it was estimated to need. */
export interface CompileTrace {
  readonly traced: TracedModel;
  readonly hostMemory: HostMemoryEstimate;
}

/** Traces as `trace` says, guarding and checking the host's memory as `memoryCheck` says. */
export async function traceWithinHostMemory(trace: Omit<ExecutorTraceRequest, 'afterKernel'>, memoryCheck: HostMemoryCheckRequest): Promise<CompileTrace> {
  try {
    const traced = await traceExecutorModel({ ...trace, afterKernel: traceMemoryGuard(memoryCheck) });
    return { traced, hostMemory: checkStepHostMemory(traced.graph, traced.variables, memoryCheck) };
  } catch (error) {
    if (causedByOutOfMemory(error)) throw hostOutOfMemory(hostHeap(), hostMemoryContext(memoryCheck, 'tracing', 1), error);
    throw error;
  }
}
