/**
 * The trace a compilation starts from, kept within the host's memory: the
 * model is traced with a guard on the host heap after each kernel, and
 * running out of memory while tracing is reported with the model and phase.
 * (The host memory a step needs is estimated from the compiled graph, after
 * patterns: see `checkStepHostMemory`.)
 */
import { hostHeap } from '../backend/host_heap.js';
import { causedByOutOfMemory, hostOutOfMemory } from '../host_memory/host_memory_error.js';
import type { TracedModel } from '../trace/trace_model.js';
import { traceExecutorModel, type ExecutorTraceRequest } from './executor_trace.js';
import { hostMemoryContext, traceMemoryGuard, type HostMemoryCheckRequest } from './host_memory_check.js';

/** Traces as `trace` says, guarding the host's memory as `memoryCheck` says. */
export async function traceWithinHostMemory(trace: Omit<ExecutorTraceRequest, 'afterKernel'>, memoryCheck: HostMemoryCheckRequest): Promise<TracedModel> {
  try {
    return await traceExecutorModel({ ...trace, afterKernel: traceMemoryGuard(memoryCheck) });
  } catch (error) {
    if (causedByOutOfMemory(error)) throw hostOutOfMemory(hostHeap(), hostMemoryContext(memoryCheck, 'tracing', 1), error);
    throw error;
  }
}
