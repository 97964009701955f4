/**
 * How much memory the tfjs backends of this process need to run a step,
 * known before anything is computed: the host's side of the simulated device.
 *
 * The walk is the memory plan's ({@link activationPeaks}) with the host's
 * tensors: every float takes four bytes (float16 values are held in float32
 * tensors), only reshapes share their input's data (transposes, slices and
 * concatenations copy), the host runs no recomputation, and the IPUs
 * computing in this process share its one heap. A worker IPU
 * (`opts.parallelIpus(true)`) has a heap of its own, which holds the weights
 * its nodes read and the values of the micro-batches it computes; the main
 * thread keeps the model's weights and the device's copies of them, the
 * optimizer state, the accumulated gradients and the call's inputs. In
 * process, the values made from the weights alone are held from one call to
 * the next (see `WeightDerivedCache`): they count with the weights, once per
 * replica, not with the activations; so are the copies the wasm routines
 * make of the filters of marked convolutions and products (packed, or transformed for
 * F(2 × 2, 3 × 3): 16/9 of a 3 × 3 filter), which live as long as their
 * filter.
 */
import { paramValues, sizeOf, type Graph, type Node, type ValueId } from '../ir/graph.js';
import { asksFusedMultiplyAdd } from '../backend/multiply_add_attribute.js';
import { type KernelCallShapes, nodeCallShapes } from '../backend/kernel_call_shapes.js';
import { markedFilterCopy } from '../backend/wasm_kernels/fused_conv2d.js';
import { markedMatMulFilterCopy } from '../backend/wasm_kernels/fused_mat_mul.js';
import type { FilterCopyShape } from '../backend/wasm_kernels/packed_filter.js';
import { activationPeaks } from '../ipu/activation_peak.js';
import { weightDerivedNodes } from '../ir/weight_derived_values.js';
import { ON_CHIP_STORAGE } from '../ipu/tensor_storage.js';
import type { Placement } from '../strategy/placement.js';
import type { Schedule } from '../strategy/schedule.js';

/** Kernels whose output shares its input's data on the host (tfjs reshapes without copying). */
const HOST_VIEW_KERNELS: ReadonlySet<string> = new Set(['Reshape', 'ExpandDims', 'Squeeze', 'Identity']);

/** What the heap of one worker IPU holds. */
export interface WorkerHeapEstimate {
  /** The IPU (within a replica) the worker computes. */
  readonly ipu: number;
  /** Its copies of the weights its nodes read (and the routines' copies of its filters). */
  readonly weights: number;
  /** The values of the micro-batches in flight on it at its peak. */
  readonly activations: number;
  /** Both. */
  readonly total: number;
}

/** How much host memory a step needs, by heap and kind. */
export interface HostMemoryEstimate {
  /** The model's weights and the device's copies of them (and, in process, the values made from them alone and the routines' copies of filters), on the main thread. */
  readonly weights: number;
  /** Optimizer state and, with gradient accumulation, the accumulated gradients, on the main thread. */
  readonly optimizer: number;
  /** The call's inputs, on the main thread. */
  readonly inputs: number;
  /** Values of the micro-batches in flight at the peak, on the main thread (0 when every IPU computes on a worker). */
  readonly activations: number;
  /** What the main thread's heap needs: the sum of the above. */
  readonly mainThread: number;
  /** One heap per worker IPU; empty when the IPUs compute on the main thread. */
  readonly workers: readonly WorkerHeapEstimate[];
}

/** What the estimate needs. */
export interface HostMemoryRequest {
  readonly graph: Graph;
  readonly placement: Placement;
  readonly schedule: Schedule;
  readonly training: boolean;
  /** State tensors the optimizer keeps per trained weight. */
  readonly optimizerSlots: number;
  /** Micro-batches whose gradients a training step sums (above 1, each trained weight has an accumulator). */
  readonly gradientAccumulation: number;
  readonly trainedWeights: ReadonlySet<string>;
  /** Bytes of one call's inputs (the host batch). */
  readonly inputBytes: number;
  /** Each IPU computes on a worker thread with a heap of its own. */
  readonly parallelIpus: boolean;
  /** The micro-batch the graph was traced with. */
  readonly microBatch: number;
  /** The replicas the step runs (each makes its own weight-derived values). */
  readonly replicas: number;
  /**
   * Estimate for this micro-batch instead (what a smaller one would need):
   * values whose first dimension is the traced micro-batch scale with it.
   */
  readonly atMicroBatch?: number;
}

function hostBytes(graph: Graph, id: number): number {
  const v = graph.values[id]!;
  return sizeOf(v.shape) * (v.dtype === 'bool' ? 1 : v.dtype === 'complex64' ? 8 : 4);
}

/** Bytes of a value of a micro-batch at `request.atMicroBatch`. */
function scaledBytes(request: HostMemoryRequest, id: number): number {
  const bytes = hostBytes(request.graph, id);
  const at = request.atMicroBatch ?? request.microBatch;
  return request.graph.values[id]!.shape[0] === request.microBatch ? (bytes * at) / request.microBatch : bytes;
}

/** Bytes of the weights each IPU's nodes read (what its worker holds copies of). */
function weightsByIpu(graph: Graph, placement: Placement): number[] {
  const read = Array.from({ length: placement.ipusPerReplica }, () => new Set<number>());
  for (const node of graph.nodes) {
    const ipu = placement.stages[placement.nodeStages[node.id]!]!.ipu;
    for (const id of node.inputs) if (graph.values[id]!.source.kind === 'param') read[ipu]!.add(id);
  }
  return read.map((ids) => [...ids].reduce((n, id) => n + hostBytes(graph, id), 0));
}

/** A copy the wasm routines make of a filter of a marked convolution or product and keep while the filter lives. */
interface FilterCopy {
  /** The filter value it is made from. */
  readonly filter: ValueId;
  /** The IPU (within a replica) of the node that makes it. */
  readonly ipu: number;
  readonly bytes: number;
}

/** The kernels whose marked nodes keep a copy of a filter: the copy a call makes, and the input it is made from. */
const MARKED_FILTER_COPIES: Readonly<Record<string, { readonly copy: (args: KernelCallShapes) => FilterCopyShape | undefined; readonly filter: string }>> = {
  FusedConv2D: { copy: markedFilterCopy, filter: 'filter' },
  _FusedMatMul: { copy: markedMatMulFilterCopy, filter: 'b' },
};

/**
 * The copies of filters the marked convolutions and products of `graph` make (packed, or
 * transformed for F(2 × 2, 3 × 3)): one per filter value and kind of copy.
 */
function filterCopies(graph: Graph, placement: Placement): FilterCopy[] {
  const copies = new Map<string, FilterCopy>();
  for (const node of graph.nodes) {
    const marked = MARKED_FILTER_COPIES[node.kernel];
    if (marked === undefined || !asksFusedMultiplyAdd(node.attrs)) continue;
    const copy = marked.copy(nodeCallShapes(node, (id) => graph.values[id]!));
    const at = node.inputNames?.indexOf(marked.filter) ?? -1;
    if (copy === undefined || at < 0) continue;
    const filter = node.inputs[at]!;
    const ipu = placement.stages[placement.nodeStages[node.id]!]!.ipu;
    copies.set(`${filter} ${copy.key}`, { filter, ipu, bytes: 4 * sizeOf(copy.shape) });
  }
  return [...copies.values()];
}

/** The host memory a step needs. */
export function estimateHostMemory(request: HostMemoryRequest): HostMemoryEstimate {
  const { graph, placement } = request;
  const params = [...paramValues(graph).values()];
  const paramBytes = params.reduce((n, v) => n + hostBytes(graph, v.id), 0);
  const trainedBytes = params.filter((v) => v.source.kind === 'param' && request.trainedWeights.has(v.source.name)).reduce((n, v) => n + hostBytes(graph, v.id), 0);
  const onWorkers = request.parallelIpus && placement.ipusPerReplica > 1;
  // In-process, every IPU computes in the one heap: walk the schedule as if they were one.
  const hostPlacement: Placement = onWorkers ? placement : { ...placement, stages: placement.stages.map((s) => ({ ...s, ipu: 0 })), ipusPerReplica: 1 };
  const held = new Set(onWorkers ? [] : weightDerivedNodes(graph).kept);
  const heldBytes = [...held].reduce((n, id) => n + hostBytes(graph, id), 0) * request.replicas;
  // A copy lives as long as its filter: once with a weight all replicas read, once per replica with a value made from weights.
  const copies = filterCopies(graph, placement);
  const copyBytes = (copy: FilterCopy) => copy.bytes * (held.has(copy.filter) ? request.replicas : 1);
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
    (id) => {
      const value = id >= graph.values.length ? id - graph.values.length : id;
      return held.has(value) ? 0 : scaledBytes(request, value);
    },
  );
  const activationsOf = (ipu: number) => peaks[ipu]!.stashed + peaks[ipu]!.working;
  const weights = 2 * paramBytes + heldBytes + (onWorkers ? 0 : copies.reduce((n, copy) => n + copyBytes(copy), 0));
  const accumulators = request.gradientAccumulation > 1 ? 1 : 0;
  const optimizer = request.training ? trainedBytes * (request.optimizerSlots + accumulators) : 0;
  const activations = onWorkers ? 0 : activationsOf(0);
  const workerWeights = onWorkers ? weightsByIpu(graph, placement).map((w, ipu) => w + copies.filter((c) => c.ipu === ipu).reduce((n, c) => n + c.bytes, 0)) : [];
  const workers = workerWeights.map((w, ipu) => ({ ipu, weights: w, activations: activationsOf(ipu), total: w + activationsOf(ipu) }));
  return { weights, optimizer, inputs: request.inputBytes, activations, mainThread: weights + optimizer + request.inputBytes + activations, workers };
}
