/**
 * Pipeline splits of a model's units over the IPUs of a replica, balanced by
 * the simulated time of each unit, by its memory, or by both; and, when the
 * last unit shares a weight with the first (a language model's head and its
 * word embedding), a split that runs it as a last stage on the first IPU,
 * beside the weight, as Graphcore's BERT configurations do.
 */
import { balancedGroups } from '../executor/layer_balance.js';
import type { Graph } from '../ir/graph.js';
import { valueBytes } from '../ir/node_cost.js';
import { DEFAULT_AVAILABLE_MEMORY_PROPORTION } from '../ipu/hardware_analysis.js';
import { ipuKernelTarget, kernelCost, kernelCycles } from '../ipu/kernel_cycles.js';
import type { IpuTargetSpec } from '../ipu/target_spec.js';

/** What one unit takes: its kernels' cycles per micro-batch (forward and backward) and the bytes it holds. */
export interface UnitCost {
  readonly unit: string;
  readonly cycles: number;
  /** Bytes of the weights its forward kernels are the first to read. */
  readonly weightBytes: number;
  /** Bytes of the values its forward kernels make for one micro-batch. */
  readonly activationBytes: number;
  /** The weights (parameter names) its forward kernels read. */
  readonly params: ReadonlySet<string>;
}

/**
 * Each unit's cost in `graph` (its float16 values flagged, a block per unit)
 * on an IPU of `spec` at the default memory proportion.
 */
export function unitCosts(graph: Graph, units: readonly string[], spec: IpuTargetSpec, halfPartials: boolean): UnitCost[] {
  const target = ipuKernelTarget(spec, { availableMemoryProportion: DEFAULT_AVAILABLE_MEMORY_PROPORTION, halfPartials });
  const costs = new Map(units.map((unit) => [unit, { unit, cycles: 0, weightBytes: 0, activationBytes: 0, params: new Set<string>() }]));
  const read = new Set<number>();
  for (const node of graph.nodes) {
    const block = node.annotations.block;
    const cost = block === undefined ? undefined : costs.get(block);
    if (!cost) continue;
    cost.cycles += kernelCycles(kernelCost(graph, node, target));
    if (node.annotations.pass !== 'forward') continue;
    for (const id of node.inputs) {
      const source = graph.values[id]!.source;
      if (source.kind === 'param') cost.params.add(source.name);
      if ((source.kind === 'param' || source.kind === 'constant') && !read.has(id)) {
        read.add(id);
        cost.weightBytes += valueBytes(graph, id);
      }
    }
    for (const id of node.outputs) cost.activationBytes += valueBytes(graph, id);
  }
  return units.map((unit) => costs.get(unit)!);
}

/** How a split was balanced. */
export type SplitBalance = 'time' | 'memory' | 'time and memory';

/** Units over the IPUs of a replica: stages in the order the model runs them, each on an IPU. */
export interface StageSplit {
  /** The measures it is balanced by (several when they give the same split). */
  readonly balances: readonly SplitBalance[];
  /** The units of each stage. */
  readonly stages: readonly (readonly string[])[];
  /** The IPU of each stage. */
  readonly ipus: readonly number[];
  /** Whether the last unit runs as a last stage on IPU 0, beside a weight it shares with the first. */
  readonly sharedWeightOnFirstIpu: boolean;
  /** Each IPU's memory as the memory balance measures it (a weight a stage shares with another IPU counted on both). */
  readonly memory: readonly number[];
}

/** The parameters the last unit shares with the first (a head and its tied embedding). */
function sharedWithFirst(costs: readonly UnitCost[]): boolean {
  if (costs.length < 3) return false;
  const first = costs[0]!.params;
  return [...costs[costs.length - 1]!.params].some((p) => first.has(p));
}

/**
 * The splits of `costs`' units over `ipus` IPUs: balanced by time, by memory
 * (weights with `stateBytesPerWeightByte` of optimizer state and
 * accumulators a weight byte, and activations), and by both (each share of
 * its total, added); each again with the last unit on IPU 0 when it shares a
 * weight with the first. A split two measures give is listed once, with
 * both. One IPU: one split.
 */
export function stageSplits(costs: readonly UnitCost[], ipus: number, stateBytesPerWeightByte: number): StageSplit[] {
  const units = costs.map((c) => c.unit);
  const memory = (c: UnitCost) => c.weightBytes * (1 + stateBytesPerWeightByte) + c.activationBytes;
  const byUnit = new Map(costs.map((c) => [c.unit, c]));
  const ipuMemory = (stages: readonly (readonly string[])[], stageIpus: readonly number[]) => {
    const perIpu = new Array<number>(ipus).fill(0);
    stages.forEach((stage, i) => stage.forEach((unit) => (perIpu[stageIpus[i]!]! += memory(byUnit.get(unit)!))));
    return perIpu;
  };
  if (ipus === 1) return [{ balances: ['time', 'memory', 'time and memory'], stages: [units], ipus: [0], sharedWeightOnFirstIpu: false, memory: ipuMemory([units], [0]) }];
  const totalTime = costs.reduce((n, c) => n + c.cycles, 0) || 1;
  const totalMemory = costs.reduce((n, c) => n + memory(c), 0) || 1;
  const measures: [SplitBalance, (c: UnitCost) => number][] = [
    ['time', (c) => c.cycles],
    ['memory', memory],
    ['time and memory', (c) => c.cycles / totalTime + memory(c) / totalMemory],
  ];
  const splits: StageSplit[] = [];
  const add = (split: StageSplit) => {
    const same = splits.findIndex((s) => JSON.stringify([s.stages, s.ipus]) === JSON.stringify([split.stages, split.ipus]));
    if (same < 0) splits.push(split);
    else splits[same] = { ...splits[same]!, balances: [...splits[same]!.balances, ...split.balances] };
  };
  for (const [balance, measure] of measures) {
    if (costs.length >= ipus) {
      const groups = balancedGroups(costs, measure, ipus);
      const stages = groups.map((g) => g.map((c) => c.unit));
      const stageIpus = groups.map((_, i) => i);
      add({ balances: [balance], stages, ipus: stageIpus, sharedWeightOnFirstIpu: false, memory: ipuMemory(stages, stageIpus) });
    }
    if (sharedWithFirst(costs) && costs.length - 1 >= ipus) {
      // The head is balanced as if it came first, so IPU 0 counts it.
      const last = costs[costs.length - 1]!;
      const groups = balancedGroups([last, ...costs.slice(0, -1)], measure, ipus);
      const stages = groups.map((g) => g.filter((c) => c !== last).map((c) => c.unit));
      if (stages.some((s) => s.length === 0)) continue;
      const stageIpus = [...stages.map((_, i) => i), 0];
      add({ balances: [balance], stages: [...stages, [last.unit]], ipus: stageIpus, sharedWeightOnFirstIpu: true, memory: ipuMemory([...stages, [last.unit]], stageIpus) });
    }
  }
  return splits;
}
