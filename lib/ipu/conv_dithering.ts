/**
 * Where a convolution's tensors lie on the tiles, and poplibs' convolution
 * dithering (`enableConvDithering`, `ops.MultiConv.enableConvDithering`).
 *
 * poplibs lays a convolution's plan out over the tiles it uses from a start
 * tile, ascending or descending: tile = (linear index + start) mod tiles,
 * then tiles - 1 - tile when descending (lib/poplin/Convolution.cpp,
 * `linearizeTileIndices`). Without dithering every convolution starts at tile
 * 0 and ascends, so convolutions that use part of the tiles all put their
 * weights on the first tiles; with it, `getStartTile` (lib/poplin/ConvPlan.cpp)
 * picks the start and direction from a hash of the convolution's forward
 * shape: boost's `hash_combine` from 2^32/phi over the conv groups, the input
 * field, and the batch and channels (one product of the three in training, so
 * the forward, data-gradient and weight-update passes agree; one after the
 * other in inference), the start a multiple of the tiles sharing an exchange
 * bus (2 on the IPU) and the direction the hash's lowest bit.
 *
 * The memory plan reports the most convolution weight bytes one tile holds
 * ({@link convolutionWeightsPerTile}), each convolution's weights spread
 * evenly over the tiles its plan uses.
 */
import type { Graph, Node } from '../ir/graph.js';
import { valueBytes } from '../ir/node_cost.js';
import type { KernelCost } from './kernel_cycles.js';

/** Tiles that share an exchange bus on the IPU (Poplar's `Target::getTilesPerSharedExchangeBus`): a dithered start tile is a multiple of it. */
export const TILES_PER_SHARED_EXCHANGE_BUS = 2;

/** The forward convolutions whose layout is modelled. */
const FORWARD_CONVOLUTIONS: ReadonlySet<string> = new Set(['Conv2D', 'Conv3D', 'DepthwiseConv2dNative', 'FusedConv2D', 'FusedDepthwiseConv2D']);

/** What poplibs' `ConvParams` says of a forward convolution, as `getStartTile` hashes it. */
export interface ConvolutionShape {
  readonly convGroups: number;
  readonly batchSize: number;
  readonly inputField: readonly number[];
  readonly inputChannelsPerGroup: number;
  readonly outputChannelsPerGroup: number;
}

/** Where a convolution's layout starts, and which way it goes. */
export interface ConvolutionLayout {
  readonly startTile: number;
  readonly descending: boolean;
}

const MASK = (1n << 64n) - 1n;

/** boost's `hash_combine` on a 64-bit `std::size_t` (the hash of an integer is the integer). */
function hashCombine(seed: bigint, value: number): bigint {
  return (seed ^ ((BigInt(value) + 0x9e3779b9n + ((seed << 6n) & MASK) + (seed >> 2n)) & MASK)) & MASK;
}

/** poplibs' dithered start tile and direction of a convolution of `shape` on `tiles` tiles (`getStartTile`). */
export function ditheredLayout(shape: ConvolutionShape, training: boolean, tiles: number): ConvolutionLayout {
  let seed = hashCombine(0x9e3779b9n, shape.convGroups);
  for (const d of shape.inputField) seed = hashCombine(seed, d);
  const channels = [shape.batchSize, shape.outputChannelsPerGroup, shape.inputChannelsPerGroup];
  if (training) seed = hashCombine(seed, channels[0]! * channels[1]! * channels[2]!);
  else for (const c of channels) seed = hashCombine(seed, c);
  const superTiles = BigInt(Math.ceil(tiles / TILES_PER_SHARED_EXCHANGE_BUS));
  return { startTile: Number((seed >> 1n) % superTiles) * TILES_PER_SHARED_EXCHANGE_BUS, descending: (seed & 1n) === 1n };
}

/** The shape of a forward convolution node (channels last, as tfjs's kernels take them). */
export function convolutionShape(graph: Graph, node: Node): ConvolutionShape {
  const x = graph.values[node.inputs[0]!]!.shape;
  const filter = graph.values[node.inputs[1]!]!.shape;
  const spatial = filter.length - 2;
  const inputChannels = x[x.length - 1]!;
  const depthwise = node.kernel.includes('Depthwise');
  return {
    convGroups: depthwise ? inputChannels : 1,
    batchSize: x[0]!,
    inputField: x.slice(1, 1 + spatial),
    inputChannelsPerGroup: depthwise ? 1 : inputChannels,
    outputChannelsPerGroup: filter[spatial + 1]!,
  };
}

/**
 * The most bytes of convolution weights one tile of each IPU holds: each
 * forward convolution's filter spread evenly over the tiles its plan uses,
 * laid from tile 0 up (from the first tile of its share in a parallel
 * `ops.MultiConv` group), or from its dithered start when its
 * `ops.MultiConv` dithers it.
 */
export function convolutionWeightsPerTile(
  graph: Graph,
  costs: readonly KernelCost[],
  ipuOf: (node: Node) => number,
  ipuCount: number,
  tiles: number,
  training: boolean,
): number[] {
  const perTile = Array.from({ length: ipuCount }, () => new Float64Array(tiles));
  for (const node of graph.nodes) {
    const used = costs[node.id]?.plan?.tilesUsed;
    if (node.annotations.pass !== 'forward' || !FORWARD_CONVOLUTIONS.has(node.kernel) || !used) continue;
    const cost = costs[node.id]!;
    const layout = node.annotations.multiConv?.dithering
      ? ditheredLayout(convolutionShape(graph, node), training, tiles)
      : { startTile: cost.startTile ?? 0, descending: false };
    const share = valueBytes(graph, node.inputs[1]!) / Math.min(used, tiles);
    const ipuTiles = perTile[ipuOf(node)]!;
    for (let k = 0; k < Math.min(used, tiles); k++) {
      const tile = (k + layout.startTile) % tiles;
      ipuTiles[layout.descending ? tiles - 1 - tile : tile]! += share;
    }
  }
  return perTile.map((t) => t.reduce((a, b) => Math.max(a, b), 0));
}
