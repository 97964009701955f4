/**
 * Keeping a step within the host's memory: before a step runs, the host
 * memory it needs is estimated from its compiled graph (after patterns, which
 * may add values made from the weights and mark convolutions whose routines
 * keep copies of their filters), placement and schedule, and a step that
 * will not fit a heap is refused at once, before the device is loaded, with the figures and
 * what would help; while a model is traced for real, a guard checks the
 * memory its tensors take at every kernel, so that running out becomes an
 * error naming the model, the phase and the micro-batch instead of a crash or
 * a hang deep in the backend.
 */
import type * as tf from '@tensorflow/tfjs';
import { hostHeap } from '../backend/host_heap.js';
import type { Graph } from '../ir/graph.js';
import type { OptionsSettings } from '../options/options_settings.js';
import type { BatchFactors } from '../executable/batch_plan.js';
import { checkHostMemory, guardHostMemory, type HostMemoryContext } from '../host_memory/host_memory_error.js';
import { estimateHostMemory, type HostMemoryEstimate } from '../host_memory/host_memory_estimate.js';
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
export function hostMemoryContext(request: HostMemoryCheckRequest, phase: HostMemoryContext['phase'], ipusPerReplica: number): HostMemoryContext {
  return {
    model: request.model,
    phase,
    training: request.training,
    microBatch: request.examples[0]?.shape[0] ?? 1,
    factors: request.factors,
    ipusPerReplica,
    parallelIpus: request.settings.parallelIpus,
  };
}

/** A check, after each kernel of a real trace, that the tensors stay within the heap. */
export function traceMemoryGuard(request: HostMemoryCheckRequest): () => void {
  const heap = hostHeap();
  return () => guardHostMemory(heap, 0, () => hostMemoryContext(request, 'tracing', 1));
}

/**
 * Estimates the host memory a step of `graph` (the compiled graph) needs and throws a
 * `HostMemoryError` if it will not fit the backend's heap; returns the
 * estimate.
 */
export function checkStepHostMemory(graph: Graph, variables: ReadonlyMap<string, tf.Variable>, request: HostMemoryCheckRequest): HostMemoryEstimate {
  const { settings, factors } = request;
  const placement = placeGraph(graph, {
    strategy: settings.executionStrategy.toJSON(),
    replicationFactor: factors.replicationFactor,
    autoRoundNumIPUs: settings.autoRoundNumIPUs,
  });
  const schedule = buildSchedule(placement, request.training, request.training ? factors.gradientAccumulation : factors.deviceIterations);
  const context = hostMemoryContext(request, 'running', placement.ipusPerReplica);
  const trainedWeights = request.trainedWeights ?? new Set([...variables.values()].filter((v) => v.trainable).map((v) => v.name));
  return checkHostMemory(
    (atMicroBatch, parallelIpus) =>
      estimateHostMemory({
        graph,
        placement,
        schedule,
        training: request.training,
        optimizerSlots: request.optimizerSlots,
        // A smaller micro-batch of the same host batch is more micro-batches to accumulate.
        gradientAccumulation: request.training ? (factors.gradientAccumulation * context.microBatch) / atMicroBatch : 1,
        trainedWeights,
        inputBytes: request.inputBytes,
        parallelIpus,
        microBatch: context.microBatch,
        replicas: factors.replicationFactor,
        atMicroBatch,
      }),
    hostHeap(),
    context,
  );
}
