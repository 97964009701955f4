/**
 * Values made from weights and constants only (a transposed weight, a cast
 * constant): the device makes them once per step, not once per micro-batch.
 */
import type { Graph } from './graph.js';

/** For each value id, whether it depends on weights and constants only. */
export function weightDerivedValues(graph: Graph): boolean[] {
  const perStep = new Array<boolean>(graph.values.length).fill(false);
  for (const v of graph.values) if (v.source.kind === 'param' || v.source.kind === 'constant') perStep[v.id] = true;
  for (const node of graph.nodes) {
    const fromWeights = !node.kernel.startsWith('poptfjs.') && node.inputs.length > 0 && node.inputs.every((id) => perStep[id]);
    for (const id of node.outputs) perStep[id] = fromWeights;
  }
  return perStep;
}
