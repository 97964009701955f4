/**
 * How many tile clock cycles each program of an executable takes on the
 * simulated device: the step takes its timeline's cycles (the cost model's
 * call); the host programs take their bytes over the host link (the
 * target's `hostLinkBandwidth` per IPU), every IPU's link moving its part at
 * once: `weightsFromHost` and `weightsToHost` move each weight to or from
 * every IPU that reads it, `optimizerFromHost` the optimizer's values (4
 * bytes each) to every IPU. A program's cycles are those of the IPU with the
 * most bytes, rounded up.
 */
import { paramValues } from '../ir/graph.js';
import { valueBytes } from '../ir/node_cost.js';
import type { Executable } from '../executable/executable.js';
import type { ProgramName } from '../executable/program.js';

/** Bytes of weights each IPU of a replica reads (a weight read on two IPUs counts on both). */
export function weightBytesPerIpu(executable: Executable): number[] {
  const { graph, placement } = executable;
  const bytes = new Array<number>(Math.max(1, placement.ipusPerReplica)).fill(0);
  const params = new Set([...paramValues(graph).values()].map((v) => v.id));
  const readers = new Map<number, Set<number>>();
  for (const node of graph.nodes) {
    const ipu = placement.stages[placement.nodeStages[node.id]!]!.ipu;
    for (const id of node.inputs) if (params.has(id)) readers.set(id, (readers.get(id) ?? new Set()).add(ipu));
  }
  for (const [id, ipus] of readers) for (const ipu of ipus) bytes[ipu]! += valueBytes(graph, id);
  return bytes;
}

/** Cycles of `program`; `optimizerValues` is the number of values the optimizer copies from the host. */
export function programCycles(executable: Executable, program: ProgramName, optimizerValues: number): number {
  const { spec, timeline } = executable.hardware;
  const overLink = (bytes: number) => Math.ceil((bytes / spec.hostLinkBandwidth) * spec.clockHz);
  switch (program) {
    case 'step':
      return timeline.cycles;
    case 'optimizerFromHost':
      return overLink(4 * optimizerValues);
    default:
      return overLink(Math.max(...weightBytesPerIpu(executable)));
  }
}
