/**
 * Dead-code elimination and compaction: keeps only the nodes that the graph's
 * roots (outputs, loss, gradients, assignments) depend on, and renumbers
 * values and nodes densely. Inputs are always kept, so the graph's signature
 * does not change.
 */
import { nameRecord } from '../common/name_record.js';
import { rootValues, type Graph, type Node, type Value, type ValueId } from './graph.js';

/** The graph without nodes and values that no root depends on. */
export function eliminateDeadCode(graph: Graph): Graph {
  const liveValues = new Set<ValueId>(graph.inputs);
  const liveNodes = new Set<number>();
  const stack = rootValues(graph);
  while (stack.length > 0) {
    const id = stack.pop()!;
    if (liveValues.has(id) && graph.values[id]!.source.kind !== 'input') continue;
    liveValues.add(id);
    const source = graph.values[id]!.source;
    if (source.kind === 'node' && !liveNodes.has(source.node)) {
      liveNodes.add(source.node);
      const node = graph.nodes[source.node]!;
      for (const out of node.outputs) liveValues.add(out);
      stack.push(...node.inputs);
    }
  }
  return compact(graph, liveValues, liveNodes);
}

function compact(graph: Graph, liveValues: Set<ValueId>, liveNodes: Set<number>): Graph {
  const valueMap = new Map<ValueId, ValueId>();
  const nodeMap = new Map<number, number>();
  const values: Value[] = [];
  for (const v of graph.values) {
    if (!liveValues.has(v.id)) continue;
    valueMap.set(v.id, values.length);
    values.push(v);
  }
  const nodes: Node[] = [];
  for (const n of graph.nodes) {
    if (!liveNodes.has(n.id)) continue;
    nodeMap.set(n.id, nodes.length);
    nodes.push(n);
  }
  const mapValue = (id: ValueId): ValueId => {
    const mapped = valueMap.get(id);
    if (mapped === undefined) throw new Error(`internal error: value %${id} is used but was eliminated`);
    return mapped;
  };
  const newValues: Value[] = values.map((v, i) => {
    const source = v.source.kind === 'node' ? { ...v.source, node: nodeMap.get(v.source.node)! } : v.source;
    return { id: i, shape: v.shape, dtype: v.dtype, source, ...(v.precision ? { precision: v.precision } : {}) };
  });
  const newNodes: Node[] = nodes.map((n, i) => {
    const annotations = { ...n.annotations };
    if (annotations.gradOf !== undefined) {
      const g = nodeMap.get(annotations.gradOf);
      if (g === undefined) delete annotations.gradOf;
      else annotations.gradOf = g;
    }
    return { ...n, id: i, inputs: n.inputs.map(mapValue), outputs: n.outputs.map(mapValue), annotations };
  });
  const gradients = graph.roles.gradients ? nameRecord(Object.entries(graph.roles.gradients).map(([k, v]) => [k, mapValue(v)])) : undefined;
  return {
    values: newValues,
    nodes: newNodes,
    inputs: graph.inputs.map(mapValue),
    roles: {
      outputs: graph.roles.outputs.map(mapValue),
      ...(graph.roles.loss !== undefined ? { loss: mapValue(graph.roles.loss) } : {}),
      ...(gradients ? { gradients } : {}),
      ...(graph.roles.lossScale !== undefined ? { lossScale: mapValue(graph.roles.lossScale) } : {}),
      ...(graph.roles.hostOverlap ? { hostOverlap: graph.roles.hostOverlap } : {}),
    },
    assignments: graph.assignments.map((a) => ({ param: a.param, value: mapValue(a.value) })),
  };
}
