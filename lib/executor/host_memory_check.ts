/**
 * Keeping a step within the host's memory: before a step runs, the host
 * memory it needs is estimated from its traced graph, placement and schedule,
 * and a step that will not fit the backend's heap is refused at once with the
 * figures and what would help; while a model is traced for real and run, a
 * guard checks the memory its tensors take at every kernel, so that running
 * out becomes an error naming the model, the phase and the micro-batch
 * instead of a crash or a hang deep in the backend.
 */
import type * as tf from '@tensorflow/tfjs';
import { hostHeap } from '../backend/host_heap.js';
import type { Graph } from '../ir/graph.js';
import type { OptionsSettings } from '../options/options_settings.js';
import { microBatchesPerCall, type BatchFactors } from '../runtime/batch_plan.js';
import { checkHostMemory, estimateHostMemory, guardHostMemory, type HostMemoryContext } from '../runtime/host_memory.js';
import { placeGraph } from '../strategy/placement.js';
import { buildSchedule } from '../strategy/schedule.js';

/** What the check needs of the step being compiled. */
export interface HostMemoryCheckRequest {
  readonly model: string;
  readonly training: boolean;
  /** One micro-batch of each input. */
  readonly examples: readonly tf.Tensor[];
  readonly settings: OptionsSettings;
  readonly factors: BatchFactors;
  readonly trainedWeights: ReadonlySet<string> | undefined;
  readonly optimizerSlots: number;
  /** Bytes of one call's inputs. */
  readonly inputBytes: number;
}

/** Where a step of this model is, for host-memory messages. */
export function hostMemoryContext(request: HostMemoryCheckRequest, phase: HostMemoryContext['phase'], multiIpu: boolean): HostMemoryContext {
  return {
    model: request.model,
    phase,
    microBatch: request.examples[0]?.shape[0] ?? 1,
    microBatchesPerCall: microBatchesPerCall(request.factors),
    multiIpu,
    parallelIpus: request.settings.parallelIpus,
  };
}

/** A check, after each kernel of a real trace, that the tensors stay within the heap. */
export function traceMemoryGuard(request: HostMemoryCheckRequest): () => void {
  const heap = hostHeap();
  return () => guardHostMemory(heap, 0, () => hostMemoryContext(request, 'tracing', false));
}

/** Estimates the host memory a step of `graph` needs and throws a `HostMemoryError` if it will not fit. */
export function checkStepHostMemory(graph: Graph, variables: ReadonlyMap<string, tf.Variable>, request: HostMemoryCheckRequest): void {
  const heap = hostHeap();
  if (heap.limit === undefined) return;
  const { settings, factors } = request;
  const placement = placeGraph(graph, { strategy: settings.executionStrategy.toJSON(), replicationFactor: factors.replicationFactor, autoRoundNumIPUs: settings.autoRoundNumIPUs });
  const multiIpu = placement.ipusPerReplica > 1;
  const schedule = buildSchedule(placement, request.training, request.training ? factors.gradientAccumulation : factors.deviceIterations);
  const estimate = estimateHostMemory({
    graph,
    placement,
    schedule,
    training: request.training,
    optimizerSlots: request.optimizerSlots,
    trainedWeights: request.trainedWeights ?? new Set([...variables.values()].filter((v) => v.trainable).map((v) => v.name)),
    inputBytes: request.inputBytes,
    parallelIpus: settings.parallelIpus && multiIpu,
  });
  checkHostMemory(estimate, heap, hostMemoryContext(request, 'running', multiIpu));
}
