/**
 * The host's side of the simulated device: how much memory the tfjs backend
 * of this process (and of each worker IPU) needs to trace and run a step,
 * known before anything is computed, and a clear error instead of running
 * into the wall when it will not fit or when the backend runs out anyway.
 *
 * The estimate walks the schedule as the memory plan of the IPUs does
 * ({@link activationPeaks}), but with the host's tensors: every float takes
 * four bytes (float16 values are held in float32 tensors), only reshapes
 * share their input's data (transposes, slices and concatenations copy), and
 * the IPUs computing in this process share its one heap (each worker IPU has
 * its own). To it come the model's weights and the device's copies of them,
 * the optimizer state, the accumulated gradients and the call's inputs.
 */
import { PoptfjsError } from '../errors.js';
import type { HostHeap } from '../backend/host_heap.js';
import { paramValues, sizeOf, type Graph, type Node } from '../ir/graph.js';
import { activationPeaks } from '../ipu/activation_peak.js';
import { formatBytes } from '../ipu/byte_size.js';
import { ON_CHIP_STORAGE } from '../ipu/tensor_storage.js';
import type { Placement } from '../strategy/placement.js';
import type { Schedule } from '../strategy/schedule.js';

/** Kernels whose output shares its input's data on the host (tfjs reshapes without copying). */
const HOST_VIEW_KERNELS: ReadonlySet<string> = new Set(['Reshape', 'ExpandDims', 'Squeeze', 'Identity']);

/** How much host memory a step needs, by kind. */
export interface HostMemoryEstimate {
  /** The model's weights and the device's copies of them. */
  readonly weights: number;
  /** Optimizer state and accumulated gradients. */
  readonly optimizer: number;
  /** The call's inputs. */
  readonly inputs: number;
  /** Values of the micro-batches in flight at the peak, in this process; per worker IPU when they run on workers. */
  readonly activations: readonly number[];
  /** What the busiest heap needs: everything on the main thread, or the largest worker's activations. */
  readonly largestHeap: number;
}

/** What the estimate needs. */
export interface HostMemoryRequest {
  readonly graph: Graph;
  readonly placement: Placement;
  readonly schedule: Schedule;
  readonly training: boolean;
  /** State tensors the optimizer keeps per trained weight. */
  readonly optimizerSlots: number;
  readonly trainedWeights: ReadonlySet<string>;
  /** Bytes of one call's inputs (the host batch). */
  readonly inputBytes: number;
  /** Each IPU computes on a worker thread with a heap of its own. */
  readonly parallelIpus: boolean;
}

function hostElementBytes(graph: Graph, id: number): number {
  const v = graph.values[id]!;
  return sizeOf(v.shape) * (v.dtype === 'bool' ? 1 : v.dtype === 'complex64' ? 8 : 4);
}

/** The host memory a step needs. */
export function estimateHostMemory(request: HostMemoryRequest): HostMemoryEstimate {
  const { graph, placement } = request;
  const params = [...paramValues(graph).values()];
  const paramBytes = params.reduce((n, v) => n + hostElementBytes(graph, v.id), 0);
  const trainedBytes = params.filter((v) => v.source.kind === 'param' && request.trainedWeights.has(v.source.name)).reduce((n, v) => n + hostElementBytes(graph, v.id), 0);
  const ipus = request.parallelIpus ? placement.ipusPerReplica : 1;
  const hostPlacement: Placement = request.parallelIpus ? placement : { ...placement, stages: placement.stages.map((s) => ({ ...s, ipu: 0 })), ipusPerReplica: 1 };
  const { peaks } = activationPeaks(
    {
      graph,
      placement: hostPlacement,
      schedule: request.schedule,
      training: request.training,
      gradientAccumulation: 1,
      trainedWeights: request.trainedWeights,
      isView: (_graph: Graph, node: Node) => HOST_VIEW_KERNELS.has(node.kernel),
    },
    ON_CHIP_STORAGE,
    (id) => hostElementBytes(graph, id >= graph.values.length ? id - graph.values.length : id),
  );
  const activations = Array.from({ length: ipus }, (_, i) => peaks[i]!.stashed + peaks[i]!.working);
  const weights = 2 * paramBytes;
  const optimizer = request.training ? trainedBytes * (request.optimizerSlots + 1) : 0;
  const mainThread = weights + optimizer + request.inputBytes + (request.parallelIpus ? 0 : activations[0]!);
  return { weights, optimizer, inputs: request.inputBytes, activations, largestHeap: Math.max(mainThread, ...(request.parallelIpus ? activations : [])) };
}

/** Where a host-memory failure happened. */
export interface HostMemoryContext {
  readonly model: string;
  readonly phase: 'tracing' | 'compiling' | 'running';
  readonly microBatch: number;
  /** Micro-batches a call splits its host batch into. */
  readonly microBatchesPerCall: number;
  /** True if the model spans several IPUs, so worker IPUs would give each its own heap. */
  readonly multiIpu: boolean;
  /** True if the IPUs already run on worker threads. */
  readonly parallelIpus: boolean;
}

/** What would make a step fit the host's memory. */
function remedies(context: HostMemoryContext, fittingMicroBatch: number | undefined): string {
  const advice: string[] = [];
  if (fittingMicroBatch !== undefined && fittingMicroBatch >= 1 && fittingMicroBatch < context.microBatch) {
    const factor = Math.ceil(context.microBatch / fittingMicroBatch);
    advice.push(`a smaller micro-batch: about ${fittingMicroBatch} fits (opts.Training.gradientAccumulation or deviceIterations ×${factor} for the same host batch)`);
  } else if (context.microBatch > 1) {
    advice.push(`a smaller micro-batch (it is ${context.microBatch}; split the host batch with opts.Training.gradientAccumulation or deviceIterations)`);
  }
  if (context.multiIpu && !context.parallelIpus) advice.push('worker IPUs, each with a heap of its own (opts.parallelIpus(true))');
  if (!context.multiIpu) advice.push('pipelining the model over more IPUs on worker IPUs (Block annotations and opts.parallelIpus(true))');
  advice.push('the cpu backend (POPTFJS_BACKEND=cpu, slower) or @tensorflow/tfjs-node, which set no heap limit');
  return advice.join('; ');
}

/** The host's tfjs backend ran out of memory, or would: which memory, where, and what would help. */
export class HostMemoryError extends PoptfjsError {
  constructor(message: string, context: HostMemoryContext, cause?: unknown) {
    super(message, { type: 'host_memory', location: `${context.phase} '${context.model}'`, ...(cause !== undefined ? { cause } : {}) });
  }
}

/** Throws a {@link HostMemoryError} when the estimate does not fit the heap, with the figures and what would help. */
export function checkHostMemory(estimate: HostMemoryEstimate, heap: HostHeap, context: HostMemoryContext): void {
  if (heap.limit === undefined || estimate.largestHeap <= heap.limit) return;
  const activations = Math.max(...estimate.activations);
  const fixed = estimate.largestHeap - activations;
  const fitting = activations > 0 && heap.limit > fixed ? Math.floor((context.microBatch * (heap.limit - fixed)) / activations) : undefined;
  throw new HostMemoryError(
    `model '${context.model}': a step at micro-batch ${context.microBatch} needs about ${formatBytes(estimate.largestHeap)} of ${heap.description} ` +
      `(activations ${formatBytes(activations)}, weights and device copies ${formatBytes(estimate.weights)}, optimizer state and gradients ${formatBytes(estimate.optimizer)}, ` +
      `inputs ${formatBytes(estimate.inputs)}), so it would run out of memory while ${context.phase}. What would help: ${remedies(context, fitting)}`,
    context,
  );
}

/** Wasm and XNNPACK failures that mean the heap ran out. */
const OUT_OF_MEMORY = /memory access out of bounds|out of memory|Cannot enlarge memory|Aborted\(|XNN status .* is not successful|Array buffer allocation failed|Invalid typed array length/i;

/** True if `error` says the backend's memory ran out. */
export function isOutOfMemory(error: unknown): boolean {
  return error instanceof Error && OUT_OF_MEMORY.test(`${error.name}: ${error.message}`);
}

/** A {@link HostMemoryError} for a backend that ran out of memory (or is about to) while `context.phase`. */
export function hostOutOfMemory(heap: HostHeap, context: HostMemoryContext, cause?: unknown): HostMemoryError {
  return new HostMemoryError(
    `model '${context.model}' ran out of host memory while ${context.phase} at micro-batch ${context.microBatch}: ` +
      `its tensors take ${formatBytes(heap.used())} of ${heap.description}. What would help: ${remedies(context, undefined)}`,
    context,
    cause,
  );
}

/**
 * Throws before a kernel would take the tensors of this process past the
 * heap's limit (`nextBytes`: what it is about to allocate).
 */
export function guardHostMemory(heap: HostHeap, nextBytes: number, context: () => HostMemoryContext): void {
  if (heap.limit !== undefined && heap.used() + nextBytes > heap.limit) throw hostOutOfMemory(heap, context());
}
