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
 * - every other kernel costs what its record in the kernel catalogue
 *   (lib/backend/kernel_catalogue) says, written in the primitives below
 *   ({@link IpuCostModel}); a kernel without a record is an error;
 * - matrix products and convolutions are planned by {@link planMatMul}
 *   (operand exchange, AMP or vector compute, reduction of partial sums);
 * - element-wise passes spread their elements evenly over the tiles; each
 *   tile pays a vertex's fixed cost plus the operation's cycles per element
 *   (poplibs' estimates, in the catalogue), and a broadcast operand is
 *   exchanged to the tiles that need it;
 * - reductions add their elements on each tile, exchange the partial sums
 *   and add them again (two supersteps);
 * - a dropout is one pass of poprand's Dropout vertex, which draws the mask's
 *   bits as it applies them: the product that applies a mask pays it, and the
 *   draw and arithmetic that make the mask (lib/ir/dropout_masks.ts) are free;
 * - every superstep ends with a sync of the IPU's tiles (`TILE_SYNC_CYCLES`);
 * - a loop or cond costs its bodies' kernels.
 */
import { kernelRecord } from '../backend/kernel_catalogue/kernel_catalogue.js';
import type { CostParts, CyclesPerElement, KernelCostModel } from '../backend/kernel_catalogue/kernel_record.js';
import { cyclesIn, POPLIBS_CYCLES } from '../backend/kernel_catalogue/poplibs_cycles.js';
import type { SerializedMatMulAttrs } from '../backend/poptfjs_kernels/serialized_matmul_kernel.js';
import { dropoutMaskValues } from '../ir/dropout_masks.js';
import { sizeOf, type Graph, type Node } from '../ir/graph.js';
import { kernelNode } from '../ir/kernel_node.js';
import { computesInFloat16, valueBytes } from '../ir/node_cost.js';
import { availableMemoryProportionOf, partialsTypeOf } from '../ir/planner_settings.js';
import { isViewNode } from '../ir/value_views.js';
import { bodyWorkingBytes } from './body_memory.js';
import { EXCHANGE_BYTES_PER_TILE_CYCLE, planMatMul, TILE_SYNC_CYCLES, type MatMulPlan, type MatMulTarget } from './matmul_plan.js';
import { matMulShape } from './matmul_shape.js';
import { serializedStep } from './serialized_matmul.js';
import { ampMacsPerCycle, type IpuTargetSpec } from './target_spec.js';

/** Fixed cycles of an element-wise vertex on a tile: six workers' set-up plus the supervisor's (poplibs' `BinaryOp1D` estimate: 6 × 26–29 + 11). */
export const ELEMENTWISE_VERTEX_CYCLES = 170;
/** Bytes a tile copies per cycle in its own memory (one 64-bit load and store per cycle). */
export const LOCAL_COPY_BYTES_PER_CYCLE = 8;
/**
 * poprand's Dropout vertex on a tile (poplibs lib/poprand/poprandCycleEstimators.cpp): 6 cycles of the supervisor
 * and 24 for each of the six workers, then 2 cycles a 64-bit vector of its output, and 9 (float16) or 1 (float32) more
 * when the tile's elements do not fill the last vector.
 */
const DROPOUT_VERTEX_CYCLES = 6 + 24 * 6;
const DROPOUT_CYCLES_PER_VECTOR = 2;

/** Elements per tile cycle of the first stage of a reduction (one 64-bit vector add per cycle). */
const REDUCTION_CYCLES_PER_ELEMENT: CyclesPerElement = [0.25, 0.5];

/** The IPU a kernel runs on, for the cost model. */
export interface KernelTarget extends MatMulTarget {
  /** Matrix products accumulate in float16 (`Precision.setPartialsType(half)`) instead of float32. */
  readonly halfPartials: boolean;
  /** Bytes the IPU sends to the host per tile clock cycle (host-link bandwidth over the clock), for kernels that print. */
  readonly hostBytesPerCycle: number;
}

/**
 * One IPU of `spec` as the cost model takes it: `tiles` of its tiles (all of
 * them unless some are set aside as I/O tiles), their memory at
 * `availableMemoryProportion`, the AMP's products a cycle, and the host link's
 * bytes per cycle.
 */
export function ipuKernelTarget(
  spec: IpuTargetSpec,
  settings: { readonly availableMemoryProportion: number; readonly halfPartials: boolean; readonly tiles?: number },
): KernelTarget {
  return {
    tiles: settings.tiles ?? spec.tiles,
    memoryPerTile: spec.memoryPerTile,
    availableMemoryProportion: settings.availableMemoryProportion,
    macsPerCycle: ampMacsPerCycle(spec),
    halfPartials: settings.halfPartials,
    hostBytesPerCycle: spec.hostLinkBandwidth / spec.clockHz,
  };
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
  /** The first tile of the plan's layout, when it is not tile 0 (a convolution of a parallel `ops.MultiConv` group, on its share of the tiles). */
  readonly startTile?: number;
  /** Tile cycles sending values to the host and receiving values from it over the host link (a CPU op). */
  readonly host?: { readonly toHost: number; readonly fromHost: number };
}

const FREE: KernelCost = Object.freeze({ compute: 0, exchange: 0, sync: 0, temporaryBytes: 0 });

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

/** One pass of poprand's Dropout vertex over `elements` spread over the tiles. */
function dropoutCost(elements: number, half: boolean, tiles: number): KernelCost {
  const perTile = Math.ceil(elements / tiles);
  const width = half ? 4 : 2; // elements of a 64-bit vector
  const partialVector = perTile % width === 0 ? 0 : half ? 9 : 1;
  return { compute: DROPOUT_VERTEX_CYCLES + DROPOUT_CYCLES_PER_VECTOR * Math.ceil(perTile / width) + partialVector, exchange: 0, sync: TILE_SYNC_CYCLES, temporaryBytes: 0 };
}

function reductionCost(elements: number, outputs: number, half: boolean, tiles: number): KernelCost {
  const first = elementwiseCycles(elements, cyclesIn(REDUCTION_CYCLES_PER_ELEMENT, half), tiles);
  // Each output's partial sums come from the tiles its elements were spread over.
  const contributors = Math.max(1, Math.min(tiles, Math.ceil(elements / Math.max(1, outputs))));
  if (contributors === 1) return { compute: first, exchange: 0, sync: TILE_SYNC_CYCLES, temporaryBytes: 0 };
  const partialsPerTile = Math.ceil((outputs * contributors) / tiles);
  const exchange = (partialsPerTile * 4) / EXCHANGE_BYTES_PER_TILE_CYCLE;
  const second = elementwiseCycles(outputs * contributors, cyclesIn(REDUCTION_CYCLES_PER_ELEMENT, false), tiles);
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
  const additions = (factor - 1) * elementwiseCycles(outputElements, cyclesIn(POPLIBS_CYCLES.Add, halfPartials), tiles);
  return {
    ...steps,
    compute: steps.compute + additions,
    sync: steps.sync + (factor - 1) * TILE_SYNC_CYCLES,
    temporaryBytes: step.temporaryBytes + outputElements * (halfPartials ? 2 : 4),
  };
}

/**
 * The cost model's primitives on the IPU `target` for one node of `graph`,
 * in which the kernel catalogue's cost rules are written.
 */
class IpuCostModel implements KernelCostModel<KernelCost> {
  readonly free = FREE;
  readonly tiles: number;
  readonly float16: boolean;
  readonly vertexCycles = ELEMENTWISE_VERTEX_CYCLES;
  private bodies?: { readonly costs: readonly KernelCost[]; readonly working: number };

  constructor(
    private readonly graph: Graph,
    private readonly node: Node,
    private readonly target: KernelTarget,
  ) {
    this.tiles = target.tiles;
    this.float16 = computesInFloat16(graph, node);
  }

  copyCycles(bytes: number): number {
    return bytes / LOCAL_COPY_BYTES_PER_CYCLE;
  }

  exchangeCycles(bytes: number): number {
    return bytes / EXCHANGE_BYTES_PER_TILE_CYCLE;
  }

  hostCycles(bytes: number): number {
    return bytes / this.target.hostBytesPerCycle;
  }

  parts(parts: CostParts): KernelCost {
    const cost = { compute: parts.compute, exchange: parts.exchange ?? 0, sync: parts.supersteps * TILE_SYNC_CYCLES, temporaryBytes: parts.temporaryBytes ?? 0 };
    return parts.host ? { ...cost, host: parts.host } : cost;
  }

  elementwise(cycles: CyclesPerElement, elements = this.outputElements()): KernelCost {
    return {
      compute: elementwiseCycles(elements, cyclesIn(cycles, this.float16), this.tiles),
      exchange: broadcastExchange(this.graph, this.node, elements, this.tiles),
      sync: TILE_SYNC_CYCLES,
      temporaryBytes: 0,
    };
  }

  reduction(elements: number, outputs: number, precision?: 'float32'): KernelCost {
    return reductionCost(elements, outputs, precision === 'float32' ? false : this.float16, this.tiles);
  }

  /** The product the planner plans for the node, in the precision and partials it computes in, on the memory it may use. */
  product(options: { readonly serialization?: unknown; readonly epilogue?: CyclesPerElement } = {}): KernelCost {
    const { graph, node, target } = this;
    const halfPartials = (partialsTypeOf(graph, node) ?? (target.halfPartials ? 'half' : 'float')) === 'half';
    const shape = matMulShape(graph, node, this.float16 ? 'float16' : 'float32', this.float16 && halfPartials ? 'float16' : 'float32');
    if (!shape) throw new Error(`kernel '${node.kernel}' is recorded as a product, but the planner does not know what it multiplies`);
    const serialization = options.serialization as SerializedMatMulAttrs | undefined;
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
    if (serialization) return serializedCost(product, serialization, this.outputElements(), this.float16, this.tiles);
    return { ...sum(product, options.epilogue ? this.elementwise(options.epilogue) : FREE), plan };
  }

  bodyCosts(): readonly KernelCost[] {
    return this.bodyRuns().costs;
  }

  bodyWorkingBytes(): number {
    return this.bodyRuns().working;
  }

  sequence(...costs: KernelCost[]): KernelCost {
    return sum(...costs);
  }

  longest(costs: readonly KernelCost[]): KernelCost {
    return costs.reduce((a, b) => (kernelCycles(b) > kernelCycles(a) ? b : a));
  }

  repeat(cost: KernelCost, times: number, temporaryBytes: number): KernelCost {
    return { compute: times * cost.compute, exchange: times * cost.exchange, sync: times * cost.sync, temporaryBytes };
  }

  private outputElements(): number {
    return this.node.outputs.reduce((n, id) => n + sizeOf(this.graph.values[id]!.shape), 0);
  }

  /** Each body's kernels summed, and the most bytes a body holds while it runs ({@link bodyWorkingBytes}). */
  private bodyRuns(): { readonly costs: readonly KernelCost[]; readonly working: number } {
    if (this.bodies) return this.bodies;
    const runs = (this.node.bodies ?? []).map((body) => {
      const costs = body.nodes.map((n) => kernelCost(body, n, this.target));
      return { cost: sum(...costs), working: bodyWorkingBytes(body, (n) => costs[n.id]!.temporaryBytes) };
    });
    this.bodies = { costs: runs.map((run) => run.cost), working: Math.max(0, ...runs.map((run) => run.working)) };
    return this.bodies;
  }
}

/**
 * The cost of `node` on an IPU described by `target`: nothing for a view or for
 * making a dropout mask, a pass of poprand's Dropout for the product that
 * applies one, else what its kernel's record says.
 */
export function kernelCost(graph: Graph, node: Node, target: KernelTarget): KernelCost {
  if (isViewNode(graph, node)) return FREE;
  const masks = dropoutMaskValues(graph);
  if (node.outputs.length > 0 && node.outputs.every((id) => masks[id])) return FREE;
  if (node.inputs.some((id) => masks[id])) {
    const elements = node.outputs.reduce((n, id) => n + sizeOf(graph.values[id]!.shape), 0);
    // The dropout runs in the precision of what it is applied to: PopART's mask is never a tensor of its own.
    const applied = node.inputs.filter((id) => !masks[id]);
    return dropoutCost(elements, computesInFloat16(graph, node, applied), target.tiles);
  }
  return kernelRecord(node.kernel).cost(kernelNode(graph, node), new IpuCostModel(graph, node, target));
}

/** Tile cycles of a cost: compute, exchange, syncs and host transfers one after another. */
export function kernelCycles(cost: KernelCost): number {
  return cost.compute + cost.exchange + cost.sync + (cost.host ? cost.host.toHost + cost.host.fromHost : 0);
}
