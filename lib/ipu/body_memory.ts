/**
 * The memory a body of a control-flow node (`ops.forLoop`, `ops.cond`) takes
 * while it runs: the node's temporary memory in the memory plan, the same
 * whatever the number of iterations, as the device runs the one body again.
 */
import type { Graph, Node, ValueId } from '../ir/graph.js';
import { valueBytes } from '../ir/node_cost.js';
import { storageRoots } from '../ir/value_views.js';

/**
 * The most bytes `body` holds at once: its inputs (copies of the values
 * passed in, as PopTorch's bodies take their inputs by value) for the whole
 * run, and each value it makes from its kernel to its last reader (its
 * outputs to the end), plus the temporary memory of the kernel running.
 * Views take no memory of their own and keep what they look at alive while
 * they are read.
 */
export function bodyWorkingBytes(body: Graph, kernelTemporary: (node: Node) => number): number {
  const roots = storageRoots(body);
  const end = body.nodes.length;
  const lastUse = new Map<ValueId, number>();
  const use = (id: ValueId, at: number) => {
    for (const root of roots[id]!) lastUse.set(root, Math.max(lastUse.get(root) ?? -1, at));
  };
  body.nodes.forEach((node, i) => node.inputs.forEach((id) => use(id, i)));
  for (const id of [...body.inputs, ...body.roles.outputs]) use(id, end);
  let live = body.inputs.reduce((sum, id) => sum + valueBytes(body, id), 0);
  let peak = live;
  body.nodes.forEach((node, i) => {
    const made = node.outputs.filter((id) => roots[id]!.length === 1 && roots[id]![0] === id);
    live += made.reduce((sum, id) => sum + valueBytes(body, id), 0);
    peak = Math.max(peak, live + kernelTemporary(node));
    for (const id of made) if ((lastUse.get(id) ?? i) <= i) live -= valueBytes(body, id);
    for (const id of new Set(node.inputs.flatMap((input) => roots[input]!))) {
      const source = body.values[id]!.source;
      if (source.kind === 'node' && lastUse.get(id) === i && source.node !== i) live -= valueBytes(body, id);
    }
  });
  return peak;
}
