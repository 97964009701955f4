/**
 * The signature of a graph: the types of its inputs and of every value it
 * hands back (outputs, loss, gradients, loss scale, assignments). A pattern
 * may change anything inside a graph but never its signature.
 */
import type { Graph, ValueId } from '../graph.js';

/** The graph's signature as one line of text; equal texts mean interchangeable graphs. */
export function graphSignature(graph: Graph): string {
  const type = (id: ValueId) => {
    const v = graph.values[id]!;
    return `${v.dtype}[${v.shape.join(',')}]`;
  };
  const { roles } = graph;
  const parts = [
    `inputs (${graph.inputs.map(type).join(', ')})`,
    `outputs (${roles.outputs.map(type).join(', ')})`,
    roles.loss !== undefined ? `loss ${type(roles.loss)}` : 'no loss',
    roles.gradients
      ? `gradients {${Object.entries(roles.gradients)
          .map(([k, v]) => `${k}: ${type(v)}`)
          .join(', ')}}`
      : 'no gradients',
    roles.lossScale !== undefined ? `lossScale ${type(roles.lossScale)}` : 'no lossScale',
    `assignments {${graph.assignments.map((a) => `${a.param}: ${type(a.value)}`).join(', ')}}`,
  ];
  return parts.join('; ');
}
