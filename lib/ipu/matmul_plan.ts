/**
 * How an IPU runs a matrix product or a convolution, and what it costs: a
 * small model of Poplar's convolution planner (poplin). The product of
 * `groups` independent `[rows × depth] · [depth × columns]` products is split
 * over the tiles along each of the four dimensions, the depth and the columns
 * in whole groups of the AMP's channels ({@link dimensionSplits}); each tile receives its
 * blocks of both operands over the exchange (a weight is laid out for the
 * product, so only the copies of blocks that several tiles share move),
 * computes its partial block with
 * the AMP (Accumulating Matrix Product) unit or, when that is faster, with
 * vector instructions, and when the depth is split, the partial sums are
 * exchanged and added.
 *
 * The planner picks the split with the fewest cycles whose per-tile
 * temporary memory (received operand blocks and partial sums) fits in the
 * available memory proportion of a tile's memory, as Poplar's
 * `availableMemoryProportion` constrains its planner. A split that does not
 * fit may run its columns in serial steps, as Poplar's serial splits do:
 * each step brings in and sums only its share of the right operand and
 * partials, at the cost of a vertex call and the supersteps of each extra
 * step. When nothing fits, the split with the least temporary memory.
 *
 * Cycle figures are tile clock cycles. The AMP processes a block of
 * {@link AMP_GRAINS} inputs (depth) by outputs (columns) per pass, one row
 * every few cycles (64 multiply-accumulates a cycle in FP16.16, 32 with
 * float32 partials, which use half the conv units, 16 in float32), with a
 * fixed cost per pass and per vertex call. The fixed costs come from
 * poplibs' estimate of its 1x1 AMP vertex (lib/poplin/PerformanceEstimation.hpp:
 * per pass 19 + 6 cycles of loop, 32 of weight loads, six workers × 19 of
 * set-up) and from a measurement on a Bow IPU (graphcore-research/tessellate-ipu,
 * notebooks/IPU Peak Flops.ipynb: one pass over N rows on every tile takes
 * 4·N + 333 cycles, reaching 16% of peak at N = 16 and 96% at N = 2048).
 * Channels that are not a multiple of the AMP's grain are padded, at the
 * cost of rearranging the operands ({@link rearrangementCycles}).
 * The exchange moves {@link EXCHANGE_BYTES_PER_TILE_CYCLE} bytes per tile
 * per cycle (8 TB/s over 1,472 tiles at 1.33 GHz; poplibs' planners take it
 * from `Target::getExchangeBytesPerCycle()`).
 */

/** Bytes a tile receives per cycle over the exchange. */
export const EXCHANGE_BYTES_PER_TILE_CYCLE = 4;
/** Worker threads per tile; a thread issues one instruction every six cycles (the Poplar Engine reference). */
export const WORKER_THREADS = 6;
/** Depth (input channels) and columns (output channels) of one AMP pass, by operand and partials precision. */
export const AMP_GRAINS = {
  float16: { depth: 16, columns: 16 },
  float16Float32Partials: { depth: 16, columns: 8 },
  float32: { depth: 8, columns: 16 },
} as const;
/** Fixed tile cycles of one AMP pass (poplibs' 1x1 AMP vertex estimate). */
export const AMP_PASS_OVERHEAD_CYCLES = 171;
/** Fixed tile cycles of one AMP vertex call besides its passes: 333 measured for a one-pass call, less one pass. */
export const AMP_CALL_OVERHEAD_CYCLES = 162;
/** Cycles of a sync of all the tiles of one IPU at the end of a superstep (the figure poplibs' CTC loss planner uses, lib/popnn/CTCLossPlan.cpp). */
export const TILE_SYNC_CYCLES = 90;
/** The most serial steps a product's columns are split into. */
export const MAX_SERIAL_STEPS = 16;
/** Fixed tile cycles of a vector multiply-accumulate vertex (six workers' set-up). */
export const VECTOR_VERTEX_OVERHEAD_CYCLES = 170;
/** Multiply-accumulates per tile cycle of the vector path: one 64-bit instruction per cycle over the six threads (2 float32 or 4 float16 lanes). */
export const VECTOR_MACS_PER_CYCLE = { float16: 4, float32: 2 } as const;
/** Elements per tile cycle of the additions that reduce partial sums (64-bit vectors). */
export const REDUCTION_ELEMENTS_PER_CYCLE = { float16: 4, float32: 2 } as const;

/** The shape of a product: `groups` independent `[rows × depth] · [depth × columns]` products. */
export interface MatMulShape {
  readonly groups: number;
  readonly rows: number;
  readonly depth: number;
  readonly columns: number;
  /** Elements of the left operand per row and unit of depth read by a tile (1 for a matrix; 1/(kh·kw) for a convolution, whose kernel taps reuse the input). */
  readonly leftReuse?: number;
  /**
   * The left (`[rows × depth]`) or right (`[depth × columns]`) operand is a
   * weight, which Poplar lays out for the product that reads it: a tile
   * receives it only when several tiles need the same block.
   */
  readonly leftResident?: boolean;
  readonly rightResident?: boolean;
  /** Input channels of a convolution (its depth over its kernel taps); a matrix product's depth by default. */
  readonly inputChannels?: number;
  /** Precision of the operands. */
  readonly precision: 'float16' | 'float32';
  /** Precision of the partial sums (float32 unless half partials are asked for in float16). */
  readonly partials: 'float16' | 'float32';
}

/** The IPU a product runs on. */
export interface MatMulTarget {
  /** Tiles available to compute. */
  readonly tiles: number;
  /** Memory per tile, bytes. */
  readonly memoryPerTile: number;
  /** Fraction of a tile's memory the product may use for temporaries (Poplar's default 0.6). */
  readonly availableMemoryProportion: number;
  /** AMP multiply-accumulates per tile per cycle: fp16 with fp16 partials, fp16 with fp32 partials, fp32. */
  readonly macsPerCycle: { readonly float16: number; readonly float16Float32Partials: number; readonly float32: number };
}

/** How a product is split over the tiles, and what it costs. */
export interface MatMulPlan {
  /** Tiles along each dimension, and serial steps over the columns. */
  readonly split: { readonly groups: number; readonly rows: number; readonly columns: number; readonly depth: number; readonly serial: number };
  readonly tilesUsed: number;
  /** Whether the tiles compute with the AMP or with vector instructions. */
  readonly unit: 'amp' | 'vector';
  /**
   * Tile cycles of each phase (the longest tile's); `rearrangement` is the
   * part of the exchange and compute spent padding operands to the AMP's
   * channel grain ({@link rearrangementCycles}).
   */
  readonly cycles: { readonly exchange: number; readonly compute: number; readonly reduction: number; readonly rearrangement: number; readonly total: number };
  /** Temporary memory over all tiles: received operand blocks and partial sums. */
  readonly temporaryBytes: number;
  /** Whether the temporary memory fits the available memory proportion. */
  readonly fitsProportion: boolean;
}

const ceil = (a: number, b: number) => Math.ceil(a / b);

/** One way of splitting a dimension over tiles: how many tiles, and the most elements one tile gets. */
interface DimensionSplit {
  readonly parts: number;
  readonly perTile: number;
}

/**
 * The distinct splits of a dimension of `size` over at most `maxParts` tiles
 * in whole grains of `grain` elements, the fewest tiles for each per-tile
 * size. poplin's planner splits each dimension by its grains: the input
 * channels in groups of the vertex's input channels, the output channels in
 * groups of its partial channels (lib/poplin/ConvModel.cpp,
 * `getInChanGrainSizes`, `getOutChanGrainSizes`), so that a tile's block
 * is whole AMP passes.
 */
function dimensionSplits(size: number, maxParts: number, grain = 1): DimensionSplit[] {
  const grains = ceil(size, grain);
  const splits: DimensionSplit[] = [];
  const limit = Math.max(1, Math.min(grains, maxParts));
  for (let p = 1; p <= limit; ) {
    const grainsPerTile = ceil(grains, p);
    splits.push({ parts: ceil(grains, grainsPerTile), perTile: Math.min(size, grainsPerTile * grain) });
    // The next split that gives a smaller block.
    p = grainsPerTile > 1 ? ceil(grains, grainsPerTile - 1) : limit + 1;
  }
  return splits;
}

/** The AMP's mode for a product's operand and partials precision. */
function ampMode(shape: MatMulShape): keyof typeof AMP_GRAINS {
  return shape.precision === 'float32' ? 'float32' : shape.partials === 'float32' ? 'float16Float32Partials' : 'float16';
}

/** Tile cycles of one tile's block of the product. */
function blockCycles(shape: MatMulShape, target: MatMulTarget, g: number, m: number, k: number, n: number): { cycles: number; unit: 'amp' | 'vector' } {
  const mode = ampMode(shape);
  const grain = AMP_GRAINS[mode];
  const rowCycles = (grain.depth * grain.columns) / target.macsPerCycle[mode];
  const passes = g * ceil(k, grain.depth) * ceil(n, grain.columns);
  const amp = AMP_CALL_OVERHEAD_CYCLES + passes * (AMP_PASS_OVERHEAD_CYCLES + WORKER_THREADS * rowCycles * ceil(m, WORKER_THREADS));
  const vector = VECTOR_VERTEX_OVERHEAD_CYCLES + (g * m * k * n) / VECTOR_MACS_PER_CYCLE[shape.precision];
  return amp <= vector ? { cycles: amp, unit: 'amp' } : { cycles: vector, unit: 'vector' };
}

/**
 * Tile cycles, copying and exchanging, of rearranging the operands of an
 * AMP product whose channels are not a multiple of the AMP's grain: poplin
 * pads the input channels (depth) to its input grain, and the output
 * channels (columns) to its partials grain, by rearranging what has them
 * into a padded copy spread over the tiles the product uses
 * (lib/poplin/ConvModel.cpp, `addTransformCycleEstimate`: padded input
 * channels rearrange the input and the weights, padded output channels the
 * weights and the output). Each rearranged tensor costs, per tile, its bytes
 * over the exchange (`exchangeBytesPerCycle`) and a copy at one element a
 * cycle, scaled by poplin's factor 5/4 (5/3 when the channels it groups are
 * not a multiple of 4 halves or 2 floats: `getScaleFactorForTransform`).
 */
function rearrangementCycles(shape: MatMulShape, tilesUsed: number): { copy: number; exchange: number } {
  const mode = ampMode(shape);
  const grain = AMP_GRAINS[mode];
  const inputChannels = shape.inputChannels ?? shape.depth;
  const padInputs = inputChannels % grain.depth !== 0;
  const padOutputs = shape.columns % grain.columns !== 0;
  if (!padInputs && !padOutputs) return { copy: 0, exchange: 0 };
  const bytes = shape.precision === 'float16' ? 2 : 4;
  const granularity = shape.precision === 'float16' ? 4 : 2;
  const divisor = (channels: number) => (channels % granularity === 0 ? 4 : 3);
  const input = shape.groups * shape.rows * Math.ceil(shape.depth * (shape.leftReuse ?? 1));
  const weights = shape.groups * shape.depth * shape.columns;
  const output = shape.groups * shape.rows * shape.columns;
  const parts: Array<[elements: number, channels: number]> = [
    ...(padInputs ? [[input, inputChannels * shape.columns] as [number, number]] : []),
    [weights, inputChannels * shape.columns],
    ...(padOutputs ? [[output, shape.columns] as [number, number]] : []),
  ];
  let copy = 0;
  let exchange = 0;
  for (const [elements, channels] of parts) {
    const perTile = ceil(elements * bytes, tilesUsed);
    copy += Math.ceil((perTile * 5) / (bytes * divisor(channels)));
    exchange += perTile / EXCHANGE_BYTES_PER_TILE_CYCLE;
  }
  return { copy, exchange };
}

const plans = new Map<string, MatMulPlan>();

/** Tiles along each dimension of a product, and the block of one tile. */
interface TileSplit {
  readonly groups: DimensionSplit;
  readonly depth: DimensionSplit;
  readonly rows: DimensionSplit;
  readonly columns: DimensionSplit;
}

/**
 * The splits the planner weighs: groups, depth (in the AMP's input grain)
 * and rows over the tiles, and for each, the columns (in the AMP's output
 * grain) over the tiles left, the three finest ways.
 */
function* tileSplits(shape: MatMulShape, tiles: number): Generator<TileSplit> {
  const grain = AMP_GRAINS[ampMode(shape)];
  for (const groups of dimensionSplits(shape.groups, tiles)) {
    for (const depth of dimensionSplits(shape.depth, Math.floor(tiles / groups.parts), grain.depth)) {
      for (const rows of dimensionSplits(shape.rows, Math.floor(tiles / (groups.parts * depth.parts)))) {
        const left = Math.floor(tiles / (groups.parts * depth.parts * rows.parts));
        for (const columns of dimensionSplits(shape.columns, left, grain.columns).slice(-3)) yield { groups, depth, rows, columns };
      }
    }
  }
}

/**
 * Serial steps over the columns that bring a tile's temporary memory within
 * `budget`: the left block stays, each step brings its share of the rest
 * (`perStep` bytes in one step).
 */
function serialSteps(leftBytes: number, perStep: number, columns: number, budget: number): number {
  let serial = 1;
  while (serial < Math.min(MAX_SERIAL_STEPS, columns) && leftBytes + perStep / serial > budget) serial++;
  return serial;
}

/** The cost of computing `shape` split as `split`, with `budget` bytes of temporary memory a tile. */
function costOfSplit(shape: MatMulShape, target: MatMulTarget, split: TileSplit, budget: number): MatMulPlan {
  const inputBytes = shape.precision === 'float16' ? 2 : 4;
  const partialBytes = shape.partials === 'float16' ? 2 : 4;
  const [g, k, m, n] = [split.groups.perTile, split.depth.perTile, split.rows.perTile, split.columns.perTile];
  const [gs, ks, ms, ns] = [split.groups.parts, split.depth.parts, split.rows.parts, split.columns.parts];
  // A resident block is held by one of the tiles that share it; the others receive copies.
  const leftShare = shape.leftResident ? (ns - 1) / ns : 1;
  const rightShare = shape.rightResident ? (ms - 1) / ms : 1;
  const leftBytes = g * m * Math.ceil(k * (shape.leftReuse ?? 1)) * leftShare * inputBytes;
  const received = leftBytes + g * k * n * rightShare * inputBytes;
  const partials = ks > 1 ? g * m * n * partialBytes : 0;
  const block = blockCycles(shape, target, g, m, k, n);
  // Each of the ks tiles holding partials of an output block reduces 1/ks of it: it receives ks - 1 pieces and adds them.
  const reducedElements = ks > 1 ? ceil(g * m * n, ks) * (ks - 1) : 0;
  const reduction = reducedElements * (partialBytes / EXCHANGE_BYTES_PER_TILE_CYCLE + 1 / REDUCTION_ELEMENTS_PER_CYCLE[shape.partials]);
  const tilesUsed = gs * ks * ms * ns;
  const perStep = received - leftBytes + partials;
  const serial = serialSteps(leftBytes, perStep, n, budget);
  const perTile = leftBytes + perStep / serial;
  const extraSteps = (serial - 1) * (AMP_CALL_OVERHEAD_CYCLES + (ks > 1 ? 3 : 2) * TILE_SYNC_CYCLES);
  const padding = block.unit === 'amp' ? rearrangementCycles(shape, tilesUsed) : { copy: 0, exchange: 0 };
  const exchange = received / EXCHANGE_BYTES_PER_TILE_CYCLE + padding.exchange;
  const compute = block.cycles + extraSteps + padding.copy;
  return {
    split: { groups: gs, rows: ms, columns: ns, depth: ks, serial },
    tilesUsed,
    unit: block.unit,
    cycles: { exchange, compute, reduction, rearrangement: padding.copy + padding.exchange, total: exchange + compute + reduction },
    temporaryBytes: perTile * tilesUsed,
    fitsProportion: perTile <= budget,
  };
}

/** The fastest split of `shape` on `target` within its temporary-memory budget (memoized). */
export function planMatMul(shape: MatMulShape, target: MatMulTarget): MatMulPlan {
  const key = JSON.stringify([shape, target]);
  const known = plans.get(key);
  if (known) return known;
  const budget = target.availableMemoryProportion * target.memoryPerTile;
  const perTile = (plan: MatMulPlan) => plan.temporaryBytes / plan.tilesUsed;
  let best: MatMulPlan | undefined;
  let leanest: MatMulPlan | undefined;
  for (const split of tileSplits(shape, target.tiles)) {
    const plan = costOfSplit(shape, target, split, budget);
    if (plan.fitsProportion && (!best || plan.cycles.total < best.cycles.total)) best = plan;
    if (!leanest || perTile(plan) < perTile(leanest)) leanest = plan;
  }
  const chosen = best ?? leanest!;
  plans.set(key, chosen);
  return chosen;
}
