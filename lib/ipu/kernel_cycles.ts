/**
 * How long one kernel takes on one IPU, in tile clock cycles, and the
 * temporary memory it needs: the cost model of the simulated IPU.
 *
 * Poplar runs a kernel as bulk-synchronous supersteps over all the tiles:
 * an exchange phase that brings each tile the data it works on, a compute
 * phase in which every tile runs its vertices, and a sync. A kernel lasts as
 * long as its busiest tile. The model follows that:
 *
 * - views (reshape, transpose, slice, ...) cost nothing;
 * - matrix products and convolutions are planned by {@link planMatMul}
 *   (operand exchange, AMP or vector compute, reduction of partial sums);
 * - element-wise kernels spread their elements evenly over the tiles; each
 *   tile pays a vertex's fixed cost plus a number of cycles per element
 *   taken from poplibs' own cycle estimates for the operation and type
 *   (lib/popops/popopsCycleEstimators.hpp: cycles per vector plus the loop's
 *   load/store overhead, over the vector width), and a broadcast operand is
 *   exchanged to the tiles that need it;
 * - reductions add their elements on each tile, exchange the partial sums
 *   and add them again (two supersteps);
 * - copies, gathers and scatters move their bytes over the exchange;
 * - every superstep ends with a sync of the IPU's tiles (`TILE_SYNC_CYCLES`);
 * - a loop or cond costs its bodies' kernels (see `controlFlowCost`).
 */
import { sizeOf, type Graph, type Node } from '../ir/graph.js';
import { computesInFloat16, valueBytes } from '../ir/node_cost.js';
import { isViewNode } from '../ir/value_views.js';
import { EXCHANGE_BYTES_PER_TILE_CYCLE, planMatMul, TILE_SYNC_CYCLES, type MatMulPlan, type MatMulTarget } from './matmul_plan.js';
import { matMulShape } from './matmul_shape.js';
import { serializedStep } from './serialized_matmul.js';
import type { SerializedMatMulAttrs } from '../backend/poptfjs_kernels/serialized_matmul_kernel.js';
import { POPTFJS_KERNELS } from '../backend/poptfjs_kernels/kernel_names.js';
import { bodyWorkingBytes } from './body_memory.js';
import { availableMemoryProportionOf, partialsTypeOf } from '../ir/planner_settings.js';

/** Fixed cycles of an element-wise vertex on a tile: six workers' set-up plus the supervisor's (poplibs' `BinaryOp1D` estimate: 6 × 26–29 + 11). */
export const ELEMENTWISE_VERTEX_CYCLES = 170;
/** Bytes a tile copies per cycle in its own memory (one 64-bit load and store per cycle). */
export const LOCAL_COPY_BYTES_PER_CYCLE = 8;

/**
 * Tile cycles per element of element-wise operations, in float16 and in
 * float32: poplibs' cycles per loop over the elements per loop, with the
 * loop's load/store overhead (lib/popops/popopsCycleEstimators.hpp and
 * .cpp, `binaryOpInnerLoopCycles`/`unaryOpInnerLoopCycles`). Six workers
 * each issue every sixth cycle, so worker cycles per element are tile cycles
 * per element.
 */
const CYCLES_PER_ELEMENT: Record<string, readonly [float16: number, float32: number]> = {
  // ADD/SUBTRACT/MULTIPLY: 1 cycle per 64-bit vector + 2 of load/store.
  Add: [0.75, 1.5],
  Sub: [0.75, 1.5],
  Multiply: [0.75, 1.5],
  AddN: [0.75, 1.5],
  SquaredDifference: [1.5, 3],
  // MAXIMUM/MINIMUM {4, false, 4} half, {3, false, 2} float; comparisons store bytes (_st8).
  Maximum: [1, 1.5],
  Minimum: [1, 1.5],
  Greater: [1.5, 2],
  GreaterEqual: [1.5, 2],
  Less: [1.5, 2],
  LessEqual: [1.5, 2],
  Equal: [1.5, 2],
  NotEqual: [1.5, 2],
  LogicalAnd: [1.5, 2],
  LogicalOr: [1.5, 2],
  LogicalNot: [1.5, 2],
  Select: [1, 1.5],
  SelectV2: [1, 1.5],
  // DIVIDE {21, false, 4} half, {10, false, 2} float.
  RealDiv: [5.25, 5],
  Div: [5.25, 5],
  DivNoNan: [5.25, 5],
  FloorDiv: [5.25, 5],
  Reciprocal: [3.75, 3],
  // RELU {2..3, false, 4/2}; NEGATE, ABSOLUTE, SQUARE, casts: one instruction.
  Relu: [0.75, 1.5],
  Relu6: [1, 2],
  LeakyRelu: [1, 2],
  Prelu: [1, 2],
  Step: [1, 2],
  Neg: [0.5, 1],
  Abs: [0.5, 1],
  Square: [0.5, 1],
  Sign: [1.25, 2.5],
  Cast: [1, 1],
  Floor: [0.5, 1],
  Ceil: [0.5, 1],
  Round: [0.5, 1],
  ClipByValue: [1, 2],
  // EXPONENT {4, false, 4} half, {6, false, 2} float; LOGARITHM {4,..,4} / {12,..,2}; TANH, SIGMOID; SQRT, RSQRT.
  Exp: [1, 3],
  Expm1: [1.25, 4],
  Log: [1, 6],
  Log1p: [4.5, 18],
  Tanh: [1, 6],
  Sigmoid: [1.5, 6],
  Softplus: [2, 9],
  Sqrt: [5.75, 5],
  Rsqrt: [4.75, 4],
  Pow: [6, 12],
  // ERF {13, false, 1} / {41, false, 1}; GELU_ERF {16, false, 1} / {22, false, 1}.
  Erf: [13, 41],
  Elu: [1.5, 4],
  Selu: [1.5, 4],
  Sin: [25, 100],
  Cos: [25, 100],
  Tan: [30, 120],
  Asin: [102, 102],
  Acos: [102, 102],
  Atan: [102, 102],
  Atan2: [144, 136],
  Sinh: [6, 12],
  Cosh: [6, 12],
  Asinh: [6, 12],
  Acosh: [6, 12],
  Atanh: [6, 12],
  IsNan: [0.75, 1.5],
  IsInf: [1.25, 1.5],
  IsFinite: [1.25, 2.5],
};
/** Cycles per element of operations the table does not list (a few instructions per element). */
const DEFAULT_CYCLES_PER_ELEMENT: readonly [number, number] = [1.5, 3];
/** Elements per tile cycle of the first stage of a reduction (one 64-bit vector add per cycle). */
const REDUCTION_CYCLES_PER_ELEMENT: readonly [number, number] = [0.25, 0.5];

const REDUCTIONS = new Set(['Sum', 'Mean', 'Max', 'Min', 'Prod', 'All', 'Any', 'ArgMax', 'ArgMin', 'Cumsum', 'Cumprod', 'EuclideanNorm']);
const MOVES = new Set([
  'PadV2',
  'MirrorPad',
  'Tile',
  'OneHot',
  'Fill',
  'ZerosLike',
  'OnesLike',
  'SpaceToBatchND',
  'BatchToSpaceND',
  'DepthToSpace',
  'ResizeNearestNeighbor',
  'ResizeNearestNeighborGrad',
  'ResizeBilinear',
  'ResizeBilinearGrad',
  'Range',
  'LinSpace',
]);
const GATHERS = new Set(['GatherV2', 'GatherNd']);
const SCATTERS = new Set(['ScatterNd', 'TensorScatterUpdate', 'UnsortedSegmentSum', 'SparseToDense']);

/** The IPU a kernel runs on, for the cost model. */
export interface KernelTarget extends MatMulTarget {
  /** Matrix products accumulate in float16 (`Precision.setPartialsType(half)`) instead of float32. */
  readonly halfPartials: boolean;
  /** Bytes the IPU sends to the host per tile clock cycle (host-link bandwidth over the clock), for kernels that print. */
  readonly hostBytesPerCycle: number;
}

/** The cost of one kernel on one IPU. */
export interface KernelCost {
  /** Tile cycles computing (the busiest tile). */
  readonly compute: number;
  /** Tile cycles exchanging data between tiles. */
  readonly exchange: number;
  /** Tile cycles in syncs between supersteps. */
  readonly sync: number;
  /** Temporary memory over the IPU's tiles, bytes. */
  readonly temporaryBytes: number;
  /** The plan of a matrix product or convolution. */
  readonly plan?: MatMulPlan;
  /** Tile cycles sending values to the host and receiving values from it over the host link (a CPU op). */
  readonly host?: { readonly toHost: number; readonly fromHost: number };
}

const FREE: KernelCost = Object.freeze({ compute: 0, exchange: 0, sync: 0, temporaryBytes: 0 });

/** The cycles per element of operations applied one after another to each element in one vertex. */
function chained(...tables: ReadonlyArray<readonly [number, number]>): readonly [number, number] {
  return [tables.reduce((n, t) => n + t[0], 0), tables.reduce((n, t) => n + t[1], 0)];
}

function perElement(table: readonly [number, number], half: boolean): number {
  return half ? table[0] : table[1];
}

/** Cycles of an element-wise pass over `elements` elements spread over the tiles. */
function elementwiseCycles(elements: number, cycles: number, tiles: number): number {
  return ELEMENTWISE_VERTEX_CYCLES + Math.ceil(elements / tiles) * cycles;
}

/** Cycles to exchange the parts of the smaller (broadcast) operands each tile needs. */
function broadcastExchange(graph: Graph, node: Node, outputElements: number, tiles: number): number {
  let bytes = 0;
  for (const id of node.inputs) {
    const v = graph.values[id]!;
    const elements = sizeOf(v.shape);
    if (elements > 1 && elements < outputElements) bytes += Math.min(elements, Math.ceil(outputElements / tiles)) * (valueBytes(graph, id) / elements);
  }
  return bytes / EXCHANGE_BYTES_PER_TILE_CYCLE;
}

function reductionCost(elements: number, outputs: number, half: boolean, tiles: number): KernelCost {
  const first = elementwiseCycles(elements, perElement(REDUCTION_CYCLES_PER_ELEMENT, half), tiles);
  // Each output's partial sums come from the tiles its elements were spread over.
  const contributors = Math.max(1, Math.min(tiles, Math.ceil(elements / Math.max(1, outputs))));
  if (contributors === 1) return { compute: first, exchange: 0, sync: TILE_SYNC_CYCLES, temporaryBytes: 0 };
  const partialsPerTile = Math.ceil((outputs * contributors) / tiles);
  const exchange = (partialsPerTile * 4) / EXCHANGE_BYTES_PER_TILE_CYCLE;
  const second = elementwiseCycles(outputs * contributors, perElement(REDUCTION_CYCLES_PER_ELEMENT, false), tiles);
  return { compute: first + second, exchange, sync: 2 * TILE_SYNC_CYCLES, temporaryBytes: outputs * contributors * 4 };
}

function sum(...costs: KernelCost[]): KernelCost {
  return costs.reduce(
    (a, b) => ({
      compute: a.compute + b.compute,
      exchange: a.exchange + b.exchange,
      sync: a.sync + b.sync,
      temporaryBytes: Math.max(a.temporaryBytes, b.temporaryBytes),
    }),
    FREE,
  );
}

/**
 * The cost of a serialized product (`ops.serializedMatMul`) whose each step
 * costs `step`: the steps one after another, holding one step's temporary
 * memory at a time; split along the reduced dimension, each step after the
 * first adds its partial product (a temporary the size of the output) into
 * the output, in float32 unless the product is float16 without `keepPrecision`.
 */
function serializedCost(step: KernelCost, serialization: SerializedMatMulAttrs, outputElements: number, half: boolean, tiles: number): KernelCost {
  const { mode, factor, keepPrecision } = serialization;
  const steps: KernelCost = {
    compute: factor * step.compute,
    exchange: factor * step.exchange,
    sync: factor * step.sync,
    temporaryBytes: step.temporaryBytes,
    plan: step.plan!,
  };
  if (mode !== 'ReducingDim') return steps;
  const halfPartials = half && !keepPrecision;
  const additions = (factor - 1) * elementwiseCycles(outputElements, perElement(CYCLES_PER_ELEMENT.Add!, halfPartials), tiles);
  return {
    ...steps,
    compute: steps.compute + additions,
    sync: steps.sync + (factor - 1) * TILE_SYNC_CYCLES,
    temporaryBytes: step.temporaryBytes + outputElements * (halfPartials ? 2 : 4),
  };
}

/**
 * The cost of a control-flow node from its bodies' kernels. A loop runs its
 * body `count` times, each iteration ending with a copy of the loop-carried
 * values into the next iteration's inputs (PopART's `LoopOp` copies the
 * body's outputs to its inputs). A cond's branch is picked on the device,
 * so which one runs is unknown when compiling: the model assumes the longer
 * one (by cycles) runs, after a sync to read the condition. Either way the
 * temporary memory is what a body holds while it runs ({@link bodyWorkingBytes}),
 * once: the larger branch's for a cond.
 */
function controlFlowCost(graph: Graph, node: Node, target: KernelTarget): KernelCost {
  const bodies = (node.bodies ?? []).map((body) => {
    const costs = body.nodes.map((n) => kernelCost(body, n, target));
    return { cost: sum(...costs), working: bodyWorkingBytes(body, (n) => costs[n.id]!.temporaryBytes) };
  });
  const working = Math.max(0, ...bodies.map((b) => b.working));
  if (node.kernel === POPTFJS_KERNELS.forLoop) {
    const count = node.attrs.count as number;
    const carriedBytes = node.outputs.reduce((n, id) => n + valueBytes(graph, id), 0);
    const copy: KernelCost = {
      compute: ELEMENTWISE_VERTEX_CYCLES + Math.ceil(carriedBytes / target.tiles) / LOCAL_COPY_BYTES_PER_CYCLE,
      exchange: 0,
      sync: TILE_SYNC_CYCLES,
      temporaryBytes: 0,
    };
    const iteration = sum(bodies[0]!.cost, copy);
    return { compute: count * iteration.compute, exchange: count * iteration.exchange, sync: count * iteration.sync, temporaryBytes: working };
  }
  const longer = bodies.map((b) => b.cost).reduce((a, b) => (kernelCycles(b) > kernelCycles(a) ? b : a));
  return { compute: longer.compute, exchange: longer.exchange, sync: longer.sync + TILE_SYNC_CYCLES, temporaryBytes: working };
}

/** The cost of `node` on an IPU described by `target`. */
export function kernelCost(graph: Graph, node: Node, target: KernelTarget): KernelCost {
  const kernel = node.kernel;
  if (node.bodies) return controlFlowCost(graph, node, target);
  if (isViewNode(graph, node)) return FREE;
  const tiles = target.tiles;
  const half = computesInFloat16(graph, node);
  const output = graph.values[node.outputs[0]!]!;
  const outputElements = node.outputs.reduce((n, id) => n + sizeOf(graph.values[id]!.shape), 0);
  const elementwise = (table: readonly [number, number], elements = outputElements): KernelCost => ({
    compute: elementwiseCycles(elements, perElement(table, half), tiles),
    exchange: broadcastExchange(graph, node, elements, tiles),
    sync: TILE_SYNC_CYCLES,
    temporaryBytes: 0,
  });

  const halfPartials = (partialsTypeOf(graph, node) ?? (target.halfPartials ? 'half' : 'float')) === 'half';
  const shape = matMulShape(graph, node, half ? 'float16' : 'float32', half && halfPartials ? 'float16' : 'float32');
  if (shape) {
    const serialization = kernel === POPTFJS_KERNELS.serializedMatMul ? (node.attrs as unknown as SerializedMatMulAttrs) : undefined;
    const proportion = availableMemoryProportionOf(graph, node) ?? target.availableMemoryProportion;
    const plan = planMatMul(serialization ? serializedStep(shape, serialization) : shape, { ...target, availableMemoryProportion: proportion });
    const supersteps = plan.split.depth > 1 ? 3 : 2;
    const product: KernelCost = {
      compute: plan.cycles.compute + plan.cycles.reduction,
      exchange: plan.cycles.exchange,
      sync: supersteps * TILE_SYNC_CYCLES,
      temporaryBytes: plan.temporaryBytes,
      plan,
    };
    if (serialization) return serializedCost(product, serialization, outputElements, half, tiles);
    // Fused kernels add the bias and the activation on the output.
    const fused = kernel.startsWith('Fused') || kernel === '_FusedMatMul' ? elementwise(DEFAULT_CYCLES_PER_ELEMENT) : FREE;
    return { ...sum(product, fused), plan };
  }
  const inputElements = node.inputs.reduce((n, id) => n + sizeOf(graph.values[id]!.shape), 0);
  if (REDUCTIONS.has(kernel)) return reductionCost(sizeOf(graph.values[node.inputs[0]!]!.shape), Math.max(1, sizeOf(output.shape)), half, tiles);
  if (kernel === 'Softmax' || kernel === 'LogSoftmax') {
    // popnn's softmax and log-softmax (lib/popnn/NonLinearity.cpp softmaxImpl, LogSoftmax.cpp logSoftmaxImpl): the
    // row maxima, x - max and its exp on every element, the row sums in float32; then, once a row, 1 / sum cast back
    // to half (softmax: "we compute 1/x first as there are a lot fewer elements") or log(sum) with the same cast, and
    // one more pass over the elements: a multiply by the row's 1 / sum, or a subtract of its log(sum).
    const rows = Math.max(1, outputElements / (output.shape[output.shape.length - 1] ?? 1));
    const overRows = (table: readonly [number, number]): KernelCost => ({
      compute: elementwiseCycles(rows, perElement(table, false), tiles),
      exchange: 0,
      sync: TILE_SYNC_CYCLES,
      temporaryBytes: 0,
    });
    const cast = half ? [CYCLES_PER_ELEMENT.Cast!] : [];
    // Softmax inverts in place, then casts (two passes); log-softmax maps Cast(Log(sum)) in one.
    const perRow = kernel === 'Softmax' ? [CYCLES_PER_ELEMENT.Reciprocal!, ...cast].map(overRows) : [overRows(chained(CYCLES_PER_ELEMENT.Log!, ...cast))];
    return sum(
      reductionCost(outputElements, rows, half, tiles),
      elementwise(CYCLES_PER_ELEMENT.Sub!),
      elementwise(CYCLES_PER_ELEMENT.Exp!),
      reductionCost(outputElements, rows, half, tiles),
      ...perRow,
      elementwise(kernel === 'Softmax' ? CYCLES_PER_ELEMENT.Multiply! : CYCLES_PER_ELEMENT.Sub!),
    );
  }
  // Normalizing applies a per-channel scale and offset: two passes (popnn's channelMul and addToChannel).
  if (kernel === 'FusedBatchNorm') return sum(elementwise(CYCLES_PER_ELEMENT.Multiply!), elementwise(CYCLES_PER_ELEMENT.Add!));
  if (kernel === 'LRN')
    return sum(elementwise(CYCLES_PER_ELEMENT.Square!), elementwise(CYCLES_PER_ELEMENT.Add!), elementwise(CYCLES_PER_ELEMENT.Pow!), elementwise(CYCLES_PER_ELEMENT.Multiply!));
  if (kernel.includes('Pool')) {
    // Every output (or input gradient) element visits its window: one vector operation per window element.
    const size = (node.attrs.filterSize as number[] | number | undefined) ?? 1;
    const window = Array.isArray(size) ? size.reduce((a, b) => a * b, 1) : size * size;
    return elementwise([0.25 * window, 0.5 * window], kernel.includes('Grad') ? inputElements : outputElements);
  }
  const bytesMoved = node.outputs.reduce((n, id) => n + valueBytes(graph, id), 0);
  if (GATHERS.has(kernel) || SCATTERS.has(kernel)) {
    // Rows are fetched from (or sent to) the tiles that hold them; scatters also add what lands on the same row.
    const perTile = Math.ceil((SCATTERS.has(kernel) ? node.inputs.reduce((n, id) => n + valueBytes(graph, id), 0) : bytesMoved) / tiles);
    return {
      compute:
        ELEMENTWISE_VERTEX_CYCLES * 2 +
        perTile / LOCAL_COPY_BYTES_PER_CYCLE +
        (SCATTERS.has(kernel) ? Math.ceil(outputElements / tiles) * perElement(CYCLES_PER_ELEMENT.Add!, half) : 0),
      exchange: perTile / EXCHANGE_BYTES_PER_TILE_CYCLE,
      sync: 2 * TILE_SYNC_CYCLES,
      temporaryBytes: 0,
    };
  }
  if (MOVES.has(kernel) || kernel === 'Cast' || kernel === POPTFJS_KERNELS.float16Cast || kernel.startsWith('poptfjs.Random')) {
    const copy = Math.ceil(bytesMoved / tiles) / LOCAL_COPY_BYTES_PER_CYCLE;
    const exchange = MOVES.has(kernel) ? Math.ceil(bytesMoved / tiles) / EXCHANGE_BYTES_PER_TILE_CYCLE : 0;
    const casts = kernel === 'Cast' || kernel === POPTFJS_KERNELS.float16Cast;
    return { compute: ELEMENTWISE_VERTEX_CYCLES + copy + (casts ? Math.ceil(outputElements / tiles) : 0), exchange, sync: TILE_SYNC_CYCLES, temporaryBytes: 0 };
  }
  if (kernel === POPTFJS_KERNELS.dynamicSlice || kernel === POPTFJS_KERNELS.dynamicUpdate) {
    // popops' dynamic slice and update: the offset is sent to the tiles (a superstep), then the slice's elements move
    // between the tiles that hold them in the tensor and in the slice (another); an update writes into a copy of the tensor.
    const update = kernel === POPTFJS_KERNELS.dynamicUpdate;
    const sliceBytes = update ? valueBytes(graph, node.inputs[node.inputNames?.indexOf('src') ?? 1]!) : bytesMoved;
    const perTile = Math.ceil(sliceBytes / tiles);
    const copy = update ? Math.ceil(bytesMoved / tiles) / LOCAL_COPY_BYTES_PER_CYCLE : 0;
    return {
      compute: 2 * ELEMENTWISE_VERTEX_CYCLES + perTile / LOCAL_COPY_BYTES_PER_CYCLE + copy,
      exchange: perTile / EXCHANGE_BYTES_PER_TILE_CYCLE,
      sync: 2 * TILE_SYNC_CYCLES,
      temporaryBytes: 0,
    };
  }
  if (kernel === POPTFJS_KERNELS.nop || kernel === POPTFJS_KERNELS.ipuPrintTensor) {
    // A copy of the input on each tile (PopART's Nop and PrintTensor output a copy); a print also sends the tensor to the host.
    const copy: KernelCost = {
      compute: ELEMENTWISE_VERTEX_CYCLES + Math.ceil(bytesMoved / tiles) / LOCAL_COPY_BYTES_PER_CYCLE,
      exchange: 0,
      sync: TILE_SYNC_CYCLES,
      temporaryBytes: 0,
    };
    return kernel === POPTFJS_KERNELS.nop ? copy : { ...copy, exchange: bytesMoved / target.hostBytesPerCycle };
  }
  if (kernel === POPTFJS_KERNELS.ctcBeamSearchDecoder) {
    // Each time step extends every beam of every batch entry by every class (an element-wise pass over the candidates)
    // and keeps the best beamWidth of each entry (a reduction); the candidates and the beams' histories are temporary.
    const [steps, batch, classes] = graph.values[node.inputs[0]!]!.shape as [number, number, number];
    const beams = batch * (node.attrs.beamWidth as number);
    const candidates = beams * classes;
    const step = sum(
      { compute: elementwiseCycles(candidates, perElement(DEFAULT_CYCLES_PER_ELEMENT, false), tiles), exchange: 0, sync: TILE_SYNC_CYCLES, temporaryBytes: 0 },
      reductionCost(candidates, beams, false, tiles),
    );
    return { compute: steps * step.compute, exchange: steps * step.exchange, sync: steps * step.sync, temporaryBytes: candidates * 2 * 4 + beams * steps * 4 };
  }
  if (kernel === POPTFJS_KERNELS.cpuOp) {
    // A CPU op computes nothing on the device: its inputs go to the host and its outputs come back over the host link.
    const inputBytes = node.inputs.reduce((n, id) => n + valueBytes(graph, id), 0);
    return { ...FREE, host: { toHost: inputBytes / target.hostBytesPerCycle, fromHost: bytesMoved / target.hostBytesPerCycle } };
  }
  // A custom op (and its gradient) is taken to be element-wise: one pass over its output elements at the cycles per
  // element of an operation the table does not list, with its smaller inputs broadcast to the tiles, and one sync.
  if (kernel === POPTFJS_KERNELS.customOp || kernel === POPTFJS_KERNELS.customOpGradient) return elementwise(DEFAULT_CYCLES_PER_ELEMENT);
  // The one-pass relu kernels: one vertex running both operations on each element (popops' fused map expressions).
  if (kernel === POPTFJS_KERNELS.addRelu) return elementwise(chained(CYCLES_PER_ELEMENT.Add!, CYCLES_PER_ELEMENT.Relu!), sizeOf(output.shape));
  if (kernel === POPTFJS_KERNELS.reluGrad) return elementwise(chained(CYCLES_PER_ELEMENT.Step!, CYCLES_PER_ELEMENT.Multiply!));
  if (kernel.startsWith('poptfjs.')) return FREE;
  // A division by one number is a multiplication by its reciprocal.
  if ((kernel === 'RealDiv' || kernel === 'Div') && sizeOf(graph.values[node.inputs[1]!]!.shape) === 1) return elementwise(CYCLES_PER_ELEMENT.Multiply!);
  return elementwise(CYCLES_PER_ELEMENT[kernel] ?? DEFAULT_CYCLES_PER_ELEMENT);
}

/** Tile cycles of a cost: compute, exchange, syncs and host transfers one after another. */
export function kernelCycles(cost: KernelCost): number {
  return cost.compute + cost.exchange + cost.sync + (cost.host ? cost.host.toHost + cost.host.fromHost : 0);
}
