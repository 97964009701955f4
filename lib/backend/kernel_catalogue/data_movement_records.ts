/**
 * tfjs's kernels that move data rather than compute it: views, moves,
 * fills, gathers and scatters.
 *
 * Views are kernels whose output is another way of looking at their inputs'
 * storage, not new data. On the IPU these are Poplar tensor views (reshape,
 * dimension shuffles, slices, concatenations), which PopART makes of its
 * view-changing ops when it in-places them (`ReshapeInplace`,
 * `TransposeInplace`, `SliceInplace`, `ConcatInplace`, ...). A view takes no
 * memory and no compute; it keeps the storage it looks at alive for as long
 * as it is used. A fill (one value repeated, as tfjs's gradient functions
 * make them, and as the tracer records a large uniform captured tensor) is a
 * broadcast of a scalar constant, a view of no storage.
 */
import { gatherScatterCost, moveCost, noCost, unlistedCost, UNLISTED_COST_NOTE } from './cost_rules.js';
import { flopsPerInput, flopsPerOutput, noFlops } from './flop_rules.js';
import type { KernelNode } from './kernel_record.js';
import type { TfjsKernelRecord, TfjsKernelRecords } from './tfjs_record.js';

/**
 * tfjs's kernel that makes a tensor of one value repeated: a captured tensor
 * that large and uniform (the ones tfjs's gradient functions make) is held
 * by the graph as a node of it, not as a constant.
 */
export const FILL_KERNEL = 'Fill';

const VIEW_NOTE = 'a view of its inputs: Poplar looks at their storage another way';

/** A view, taking no memory and no compute. */
const view: TfjsKernelRecord = { category: 'view', cost: noCost, flops: noFlops, view: true, costNote: VIEW_NOTE };

/** A view that tfjs makes without copying on the host too (a reshape). */
const hostView: TfjsKernelRecord = { ...view, hostView: true };

/** Data copied to new places between tiles, no arithmetic. */
const move: TfjsKernelRecord = { category: 'move', cost: moveCost, flops: noFlops };

/** Data copied to new places with a little arithmetic per output element (interpolation, index arithmetic). */
const computedMove: TfjsKernelRecord = { category: 'move', cost: moveCost, flops: flopsPerOutput(1) };

/** A move poptfjs has no cycle estimate for. */
const unlistedMove: TfjsKernelRecord = { category: 'move', cost: unlistedCost, flops: flopsPerOutput(1), costNote: UNLISTED_COST_NOTE };

/** Rows of a gather (`scatter` false) or scatter, moving and adding no more than `flops` says. */
function gatherScatter(scatter: boolean, flops = noFlops): TfjsKernelRecord {
  return { category: 'gather/scatter', cost: gatherScatterCost(scatter), flops };
}

/** A gather or scatter poptfjs has no cycle estimate for. */
const unlistedGatherScatter: TfjsKernelRecord = { category: 'gather/scatter', cost: unlistedCost, flops: flopsPerOutput(1), costNote: UNLISTED_COST_NOTE };

/** True if a `Tile` only repeats dimensions of size 1: a broadcast, a view of its input. */
function tileBroadcasts(node: KernelNode): boolean {
  const shape = node.inputs[0]!.shape;
  const reps = node.attrs.reps;
  return Array.isArray(reps) && reps.every((r, i) => r === 1 || shape[i] === 1);
}

/** tfjs's data-movement kernels, by name. */
export const DATA_MOVEMENT_RECORDS: TfjsKernelRecords = {
  Reshape: hostView,
  Identity: hostView,
  ExpandDims: hostView,
  Transpose: view,
  Slice: view,
  StridedSlice: view,
  Concat: view,
  Pack: view,
  Unpack: view,
  SplitV: view,
  Reverse: view,
  /** One value repeated: a broadcast of a scalar, a view of no storage; weak for float16 when only the backward pass reads it. */
  [FILL_KERNEL]: { category: 'fill', cost: noCost, flops: noFlops, view: true, precision: 'weak-in-backward', costNote: 'a broadcast of one value, a view of no storage' },
  /** Zeros or ones of an input's shape, written out (poptfjs does not make them broadcasts, as it does the fills the tracer records). */
  ZerosLike: { ...move, category: 'fill' },
  OnesLike: { ...move, category: 'fill' },
  /** A view when it only repeats dimensions of size 1, else a move. */
  Tile: { ...move, view: tileBroadcasts, costNote: 'free when it only repeats dimensions of size 1: a broadcast, a view of its input' },
  PadV2: move,
  MirrorPad: move,
  OneHot: move,
  SpaceToBatchND: move,
  BatchToSpaceND: move,
  DepthToSpace: move,
  ResizeNearestNeighbor: computedMove,
  ResizeNearestNeighborGrad: computedMove,
  ResizeBilinear: computedMove,
  ResizeBilinearGrad: computedMove,
  /** A sequence written out, each element from its index. */
  Range: { ...computedMove, category: 'element-wise' },
  LinSpace: { ...computedMove, category: 'element-wise' },
  Diag: unlistedMove,
  CropAndResize: unlistedMove,
  FlipLeftRight: unlistedMove,
  RotateWithOffset: unlistedMove,
  Transform: unlistedMove,
  GatherV2: gatherScatter(false),
  GatherNd: gatherScatter(false),
  ScatterNd: gatherScatter(true),
  TensorScatterUpdate: gatherScatter(true),
  /** A scatter adding its rows: one addition per input element. */
  UnsortedSegmentSum: gatherScatter(true, flopsPerInput),
  SparseToDense: gatherScatter(true, flopsPerOutput(1)),
  Bincount: unlistedGatherScatter,
  DenseBincount: unlistedGatherScatter,
  SparseFillEmptyRows: unlistedGatherScatter,
  SparseReshape: unlistedGatherScatter,
  SparseSegmentMean: unlistedGatherScatter,
  SparseSegmentSum: unlistedGatherScatter,
  RaggedGather: unlistedGatherScatter,
  RaggedRange: unlistedGatherScatter,
  RaggedTensorToTensor: unlistedGatherScatter,
};
