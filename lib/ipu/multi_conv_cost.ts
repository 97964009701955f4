/**
 * The cost of `ops.MultiConv` groups planned in parallel: poplibs'
 * multi-convolution plans each convolution of a group on its own part of the
 * IPU's tiles so that they run at the same time (lib/poplin/ConvPlan.cpp,
 * `getParallelMultiPlan`; how the tiles are shared: ./multi_conv_plan.ts,
 * with the group's `perConvReservedTiles` and `cycleBackOff`). Each
 * convolution is planned on its tiles ({@link kernelCost} with that many
 * tiles, with its own memory proportion and partials type). The group lasts
 * as long as its slowest convolution and holds every convolution's temporary
 * memory at once; the shares lie one after another over the tiles, each
 * convolution laid out from the first tile of its own. When there is no parallel plan, the group is planned
 * serially, as poplibs falls back to serial planning.
 *
 * A group's forward convolutions, its data gradients and its weight
 * gradients (PopART's `MultiConv`, `MultiConvDataGrad`, `MultiConvWeightsGrad`)
 * are three multi-convolutions, each planned this way; only convolutions
 * that run in the same part of the schedule on the same IPU run together.
 */
import { PoptfjsError } from '../common/errors.js';
import type { Graph, Node } from '../ir/graph.js';
import { nodeFlops } from '../ir/node_cost.js';
import { kernelCost, kernelCycles, type KernelCost, type KernelTarget } from './kernel_cycles.js';
import { multiConvTiles } from './multi_conv_plan.js';

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
    const { perConvReservedTiles, cycleBackOff } = nodes[0]!.annotations.multiConv!;
    const cyclesOn = (c: number, tiles: number) => kernelCycles(kernelCost(graph, nodes[c]!, { ...targetOf(nodes[c]!), tiles }));
    const shares = multiConvTiles(
      nodes.map((n) => nodeFlops(graph, n)),
      cyclesOn,
      target.tiles,
      perConvReservedTiles,
      cycleBackOff,
    );
    if (!shares) continue;
    if (nodes.some((n) => n.annotations.multiConv!.dithering)) {
      throw new PoptfjsError(
        `Unsupported conv dithering with multi plans: MultiConv group ${nodes[0]!.annotations.multiConv!.group} runs its ${nodes.length} convolutions in parallel, each on its own part of the tiles, ` +
          "and poplibs' convolution planner cannot dither such a plan (lib/poplin/ConvPlan.cpp, getStartTile); use planType(MultiConvPlanType.Serial) or enableConvDithering(false)",
        { type: 'compile' },
      );
    }
    const shared = nodes.map((n, i) => kernelCost(graph, n, { ...targetOf(n), tiles: shares[i]! }));
    const slowest = shared.reduce((a, b) => (kernelCycles(b) > kernelCycles(a) ? b : a));
    const temporaryBytes = shared.reduce((n, c) => n + c.temporaryBytes, 0);
    const first = Math.min(...nodes.map((n) => n.id));
    let startTile = 0;
    nodes.forEach((n, i) => {
      const own = shared[i]!;
      const layout = { ...(own.plan ? { plan: own.plan } : {}), ...(startTile > 0 ? { startTile } : {}) };
      result[n.id] =
        n.id === first
          ? { compute: slowest.compute, exchange: slowest.exchange, sync: slowest.sync, temporaryBytes, ...layout }
          : { compute: 0, exchange: 0, sync: 0, temporaryBytes: 0, ...layout };
      startTile += shares[i]!;
    });
  }
  return result;
}
