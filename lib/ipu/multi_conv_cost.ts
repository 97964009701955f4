/**
 * The cost of `ops.MultiConv` groups planned in parallel: poplibs'
 * multi-convolution plans each convolution of a group on its own part of the
 * IPU's tiles so that they run at the same time (lib/poplin/ConvPlan.cpp,
 * `getParallelMultiPlan`).
 *
 * The simulated planner shares the tiles out as follows: each convolution is
 * given `perConvReservedTiles` tiles (poplibs' "make sure each remaining conv
 * gets at least N tiles"; when the IPU has fewer than N per convolution,
 * poplibs' max(1, tiles / convolutions)), and the remaining tiles are shared
 * in proportion to the convolutions' FLOPs (the measure poplibs orders them
 * by), whole tiles going to the largest remainders. Each convolution is then
 * planned on its share ({@link kernelCost} with that many tiles, with its own
 * memory proportion and partials type). The group lasts as long as its
 * slowest share and holds every share's temporary memory at once. If a share
 * would have no tile, the group is planned serially, as poplibs falls back to
 * serial planning when it finds no parallel plan.
 *
 * A group's forward convolutions, its data gradients and its weight
 * gradients (PopART's `MultiConv`, `MultiConvDataGrad`, `MultiConvWeightsGrad`)
 * are three multi-convolutions, each planned this way; only convolutions
 * that run in the same part of the schedule on the same IPU run together.
 */
import type { Graph, Node } from '../ir/graph.js';
import { nodeFlops } from '../ir/node_cost.js';
import { kernelCost, kernelCycles, type KernelCost, type KernelTarget } from './kernel_cycles.js';

/**
 * The tiles each convolution of a parallel group gets, by the convolutions'
 * FLOPs (in group order), or undefined when some convolution would get none.
 */
export function multiConvTileShares(flops: readonly number[], tiles: number, perConvReservedTiles: number): number[] | undefined {
  const count = flops.length;
  const reserved = tiles < count * perConvReservedTiles ? Math.max(1, Math.floor(tiles / count)) : perConvReservedTiles;
  const rest = Math.max(0, tiles - count * reserved);
  const total = flops.reduce((a, b) => a + b, 0);
  const exact = flops.map((f) => (total > 0 ? (rest * f) / total : rest / count));
  const shares = exact.map((e) => reserved + Math.floor(e));
  let left = tiles - shares.reduce((a, b) => a + b, 0);
  const byRemainder = exact.map((e, i) => ({ i, r: e - Math.floor(e) })).sort((a, b) => b.r - a.r || a.i - b.i);
  for (const { i } of byRemainder) {
    if (left <= 0) break;
    shares[i]!++;
    left--;
  }
  return shares.every((s) => s > 0) && shares.reduce((a, b) => a + b, 0) <= tiles ? shares : undefined;
}

/** Which of a group's multi-convolutions a convolution belongs to: forward, data gradient or weight gradient. */
function role(node: Node): string {
  return node.kernel.includes('BackpropInput') ? 'data' : node.kernel.includes('BackpropFilter') ? 'weights' : 'forward';
}

/**
 * The node costs `costs` with each parallel `ops.MultiConv` group costed as
 * it runs: its first convolution carries the group's time (its slowest
 * share's compute, exchange and syncs) and the temporary memory of all its
 * shares; the others cost nothing more, each keeping its own plan. `unitOf`
 * gives the part of the schedule a node runs in and `targetOf` the IPU it
 * runs on.
 */
export function withMultiConvGroups(graph: Graph, costs: readonly KernelCost[], unitOf: (node: Node) => number, targetOf: (node: Node) => KernelTarget): KernelCost[] {
  const groups = new Map<string, Node[]>();
  for (const node of graph.nodes) {
    const member = node.annotations.multiConv;
    if (member?.planType !== 'Parallel') continue;
    const key = `${member.group}/${role(node)}/${unitOf(node)}`;
    const nodes = groups.get(key);
    if (nodes) nodes.push(node);
    else groups.set(key, [node]);
  }
  const result = [...costs];
  for (const nodes of groups.values()) {
    if (nodes.length < 2) continue;
    nodes.sort((a, b) => a.annotations.multiConv!.index - b.annotations.multiConv!.index || a.id - b.id);
    const target = targetOf(nodes[0]!);
    const shares = multiConvTileShares(
      nodes.map((n) => nodeFlops(graph, n)),
      target.tiles,
      nodes[0]!.annotations.multiConv!.perConvReservedTiles,
    );
    if (!shares) continue;
    const shared = nodes.map((n, i) => kernelCost(graph, n, { ...targetOf(n), tiles: shares[i]! }));
    const slowest = shared.reduce((a, b) => (kernelCycles(b) > kernelCycles(a) ? b : a));
    const temporaryBytes = shared.reduce((n, c) => n + c.temporaryBytes, 0);
    const first = Math.min(...nodes.map((n) => n.id));
    nodes.forEach((n, i) => {
      const own = shared[i]!;
      result[n.id] =
        n.id === first
          ? { compute: slowest.compute, exchange: slowest.exchange, sync: slowest.sync, temporaryBytes, ...(own.plan ? { plan: own.plan } : {}) }
          : { compute: 0, exchange: 0, sync: 0, temporaryBytes: 0, ...(own.plan ? { plan: own.plan } : {}) };
    });
  }
  return result;
}
