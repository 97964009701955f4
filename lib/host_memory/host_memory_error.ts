/**
 * Running out of host memory, told clearly: a step whose estimated host
 * memory will not fit a heap is refused before it runs, and a backend that
 * runs out anyway (or is about to, by the guard each kernel passes) becomes a
 * {@link HostMemoryError} naming which memory ran out, the model, the phase,
 * the micro-batch and the heap, with what would help, instead of a crash or
 * a hang deep in the backend.
 */
import { PoptfjsError } from '../common/errors.js';
import { noteHostMemoryUse, type HostHeap } from '../backend/host_heap.js';
import { formatBytes } from '../ipu/byte_size.js';
import { sizeOf, type Graph, type Node } from '../ir/graph.js';
import type { BatchFactors } from '../executable/batch_plan.js';
import type { Executable } from '../executable/executable.js';
import type { HostMemoryEstimate, WorkerHeapEstimate } from './host_memory_estimate.js';

/** Where a host-memory failure happened. */
export interface HostMemoryContext {
  readonly model: string;
  readonly phase: 'tracing' | 'compiling' | 'running';
  readonly training: boolean;
  readonly microBatch: number;
  /** How a call splits its host batch (the advice names the factor to raise). */
  readonly factors: BatchFactors;
  readonly ipusPerReplica: number;
  /** True if the IPUs compute on worker threads. */
  readonly parallelIpus: boolean;
  /** The IPU whose worker thread's heap it is; absent for the main thread's. */
  readonly worker?: number;
}

/** The context of a step of `executable`. */
export function executableMemoryContext(executable: Executable, phase: HostMemoryContext['phase'], parallelIpus: boolean): HostMemoryContext {
  return {
    model: executable.modelName,
    phase,
    training: executable.kind === 'training',
    microBatch: executable.microBatchSize,
    factors: executable.factors,
    ipusPerReplica: executable.placement.ipusPerReplica,
    parallelIpus,
  };
}

/** What is known of smaller micro-batches: the largest that fits, that none does (and what micro-batch 1 needs), or nothing. */
type SmallerMicroBatches = { readonly fits: number } | { readonly noneFits: number } | undefined;

/** The call that splits the same host batch `factor` times more. */
function splitCall(context: HostMemoryContext, factor: number): string {
  return context.training
    ? `opts.Training.gradientAccumulation(${context.factors.gradientAccumulation * factor})`
    : `opts.deviceIterations(${context.factors.deviceIterations * factor})`;
}

/** What would make a step fit the host's memory. */
function remedies(context: HostMemoryContext, smaller: SmallerMicroBatches, workerAdvice?: string): string {
  const advice: string[] = [];
  if (smaller && 'fits' in smaller) {
    advice.push(`${splitCall(context, context.microBatch / smaller.fits)} or more, for micro-batches of ${smaller.fits} from the same host batch`);
  } else if (smaller === undefined && context.microBatch > 1) {
    advice.push(`smaller micro-batches from the same host batch (${splitCall(context, 2)} or more)`);
  }
  if (workerAdvice) advice.push(workerAdvice);
  else if (context.ipusPerReplica > 1 && !context.parallelIpus) advice.push('worker IPUs, each with a heap of its own (opts.parallelIpus(true))');
  else if (context.ipusPerReplica === 1)
    advice.push('pipelining the model over several IPUs computed on worker IPUs, each with a heap of its own (BeginBlock and opts.parallelIpus(true))');
  advice.push('the cpu backend (POPTFJS_BACKEND=cpu, slower) or @tensorflow/tfjs-node, which set no heap limit');
  const none = smaller && 'noneFits' in smaller ? `no smaller micro-batch fits (micro-batch 1 needs about ${formatBytes(smaller.noneFits)}); ` : '';
  return none + advice.join('; ');
}

/** Which heap: the main thread's or a worker IPU's. */
function heapOwner(worker: number | undefined): string {
  return worker === undefined ? 'the main thread' : `the worker thread of IPU ${worker}`;
}

/** The limit as a message gives it: what tensors may take of the heap. */
function describeLimit(heap: HostHeap): string {
  return `the ${formatBytes(heap.limit ?? 0)} tensors may take of ${heap.description}`;
}

/** The host's tfjs backend ran out of memory, or would: which memory, where, and what would help. */
export class HostMemoryError extends PoptfjsError {
  constructor(message: string, context: HostMemoryContext, cause?: unknown) {
    super(message, { type: 'host_memory', location: `${context.phase} '${context.model}'`, ...(cause !== undefined ? { cause } : {}) });
  }
}

/** The fullest heap of an estimate: its bytes, its activations, and the worker IPU it belongs to (none: the main thread). */
function fullestHeap(estimate: HostMemoryEstimate): { total: number; activations: number; worker?: number } {
  const main = { total: estimate.mainThread, activations: estimate.activations };
  const worker = estimate.workers.reduce<WorkerHeapEstimate | undefined>((a, b) => (a === undefined || b.total > a.total ? b : a), undefined);
  return worker !== undefined && worker.total > main.total ? { total: worker.total, activations: worker.activations, worker: worker.ipu } : main;
}

/** The host memory of a step at a micro-batch, with the IPUs on worker threads or not. */
export type HostMemoryEstimator = (microBatch: number, parallelIpus: boolean) => HostMemoryEstimate;

/**
 * Estimates the step's host memory as it is set up and throws a
 * {@link HostMemoryError} when a heap of it does not fit the limit, with the
 * figures and what would help: the largest micro-batch that fits, and for a
 * multi-IPU model computed in-process, what worker IPUs would need. Returns
 * the estimate.
 */
export function checkHostMemory(estimateAt: HostMemoryEstimator, heap: HostHeap, context: HostMemoryContext): HostMemoryEstimate {
  const estimate = estimateAt(context.microBatch, context.parallelIpus);
  const limit = heap.limit;
  const fits = (e: HostMemoryEstimate) => limit === undefined || fullestHeap(e).total <= limit;
  if (fits(estimate)) return estimate;
  const fullest = fullestHeap(estimate);
  const divisors = Array.from({ length: context.microBatch - 1 }, (_, i) => context.microBatch - 1 - i).filter((d) => context.microBatch % d === 0);
  const fitting = divisors.find((d) => fits(estimateAt(d, context.parallelIpus)));
  const smaller: SmallerMicroBatches =
    fitting !== undefined ? { fits: fitting } : context.microBatch > 1 ? { noneFits: fullestHeap(estimateAt(1, context.parallelIpus)).total } : undefined;
  const parts =
    fullest.worker !== undefined
      ? `activations ${formatBytes(fullest.activations)}, its copies of the weights ${formatBytes(fullest.total - fullest.activations)}`
      : `activations ${formatBytes(estimate.activations)}, weights and the device's copies ${formatBytes(estimate.weights)}, ` +
        `optimizer state and gradients ${formatBytes(estimate.optimizer)}, inputs ${formatBytes(estimate.inputs)}`;
  let workerAdvice: string | undefined;
  if (context.ipusPerReplica > 1 && !context.parallelIpus) {
    const onWorkers = estimateAt(context.microBatch, true);
    const heaviest = fullestHeap(onWorkers);
    workerAdvice =
      `worker IPUs (opts.parallelIpus(true)): each IPU's nodes would compute in a heap of their own, the fullest ` +
      `(${heaviest.worker !== undefined ? `IPU ${heaviest.worker}` : 'the main thread'}) needing about ${formatBytes(heaviest.total)}${fits(onWorkers) ? ', which fits' : ''}`;
  }
  throw new HostMemoryError(
    `model '${context.model}': a ${context.training ? 'training' : 'inference'} step at micro-batch ${context.microBatch} needs about ${formatBytes(fullest.total)} of host memory ` +
      `on ${heapOwner(fullest.worker)} (${parts}), more than ${describeLimit(heap)}, so it would run out of memory while running. ` +
      `What would help: ${remedies(context, smaller, workerAdvice)}`,
    context,
  );
}

/** Wasm and XNNPACK failures that mean the heap ran out. */
const OUT_OF_MEMORY =
  /memory access out of bounds|out of memory|Cannot enlarge memory|Aborted\(|XNN status .* is not successful|Array buffer allocation failed|Invalid typed array length/i;

/** True if `error` is the backend's (not poptfjs's) and says its memory ran out. */
function isOutOfMemory(error: unknown): boolean {
  return error instanceof Error && !(error instanceof PoptfjsError) && OUT_OF_MEMORY.test(`${error.name}: ${error.message}`);
}

/** The backend's out-of-memory error: `error`, or the error it wraps; undefined if neither says the memory ran out. */
function outOfMemoryCause(error: unknown): Error | undefined {
  const wrapped = (error as { cause?: unknown } | undefined)?.cause;
  return isOutOfMemory(error) ? (error as Error) : isOutOfMemory(wrapped) ? (wrapped as Error) : undefined;
}

/** True if `error`, or the error it wraps, says the backend's memory ran out. */
export function causedByOutOfMemory(error: unknown): boolean {
  return outOfMemoryCause(error) !== undefined;
}

/**
 * A {@link HostMemoryError} for a backend that ran out of memory while
 * `context.phase` (`cause`: its error), or whose tensors would take `needed`
 * bytes, past the heap's limit.
 */
export function hostOutOfMemory(heap: HostHeap, context: HostMemoryContext, cause?: unknown, needed?: number): HostMemoryError {
  const limit = heap.limit !== undefined ? describeLimit(heap) : heap.description;
  const failure = outOfMemoryCause(cause);
  const what =
    needed !== undefined
      ? `its tensors would take ${formatBytes(needed)}, more than ${limit}`
      : `the backend failed to allocate${failure ? ` (${failure.name}: ${failure.message.split('\n')[0]})` : ''} with its tensors taking ${formatBytes(heap.used())} of ${limit}`;
  return new HostMemoryError(
    `model '${context.model}' ran out of host memory on ${heapOwner(context.worker)} while ${context.phase} at micro-batch ${context.microBatch}: ` +
      `${what}. What would help: ${remedies(context, undefined)}`,
    context,
    cause,
  );
}

/**
 * Throws before a kernel would take the tensors of this thread past the
 * heap's limit (`nextBytes`: what it is about to allocate).
 */
export function guardHostMemory(heap: HostHeap, nextBytes: number, context: () => HostMemoryContext): void {
  if (heap.limit === undefined) return;
  const bytes = heap.used() + nextBytes;
  noteHostMemoryUse(bytes);
  if (bytes > heap.limit) throw hostOutOfMemory(heap, context(), undefined, bytes);
}

/**
 * The check each kernel of a run of `graph` passes before it runs: that its
 * outputs fit the heap. Undefined when the backend sets no limit.
 */
export function kernelMemoryGuard(graph: Graph, heap: HostHeap, context: () => HostMemoryContext): ((node: Node) => void) | undefined {
  if (heap.limit === undefined) return undefined;
  const outputBytes = graph.nodes.map((node) => node.outputs.reduce((n, id) => n + sizeOf(graph.values[id]!.shape) * 4, 0));
  return (node) => guardHostMemory(heap, outputBytes[node.id]!, context);
}
