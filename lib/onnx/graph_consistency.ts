/**
 * The consistency of an ONNX graph, checked when a model is read: every
 * tensor has one producer (a graph input, an initializer or one node's
 * output, names unique among them), each node reads only tensors made before
 * it (graph inputs, initializers, earlier nodes' outputs, or, in a subgraph,
 * tensors of the enclosing graphs made before the node holding it), and each
 * graph output is one of those tensors. ONNX requires graphs to be sorted so;
 * a crafted file that is not is refused naming the node, not met later as an
 * unknown tensor at import.
 */
import { OnnxError } from './proto/onnx_errors.js';
import type { GraphProto, NodeProto } from './proto/onnx_proto.js';

/** How a node is named in messages: `node #3 (MatMul 'fc1')`. */
function nodeLabel(node: NodeProto, index: number): string {
  return `node #${index} (${node.op_type ?? '?'}${node.name ? ` '${node.name}'` : ''})`;
}

/**
 * Throws an {@link OnnxError} naming the first inconsistency of `graph`;
 * `outer` holds the tensors of the enclosing graphs a subgraph may read, and
 * `where` says which graph it is (empty for the model's graph).
 */
export function checkGraphConsistency(graph: GraphProto, outer: ReadonlySet<string> = new Set(), where = ''): void {
  const fail = (what: string) => new OnnxError(`${where}${what}`);
  const known = new Set(outer);
  const producers = new Map<string, string>();
  const produce = (name: string, producer: string) => {
    if (name === '') return;
    const earlier = producers.get(name);
    if (earlier !== undefined) throw fail(`${producer} is named '${name}' like ${earlier}; every tensor has one producer`);
    producers.set(name, producer);
    known.add(name);
  };
  graph.input.forEach((v, i) => produce(v.name ?? '', `graph input ${i}`));
  const inputs = new Set(graph.input.map((v) => v.name ?? ''));
  // An initializer may share its graph input's name (a default value for the input).
  graph.initializer.forEach((t, i) => (inputs.has(t.name ?? '') ? known.add(t.name ?? '') : produce(t.name ?? '', `initializer ${i}`)));
  graph.node.forEach((node, n) => {
    const label = nodeLabel(node, n);
    node.input.forEach((name, k) => {
      if (name !== '' && !known.has(name)) {
        throw fail(`${label} input ${k} '${name}' is not a graph input, an initializer or the output of an earlier node`);
      }
    });
    for (const attribute of node.attribute) {
      const bodies = [...(attribute.g ? [attribute.g] : []), ...attribute.graphs];
      for (const body of bodies) checkGraphConsistency(body, known, `${where}${label} attribute '${attribute.name}' graph: `);
    }
    node.output.forEach((name, k) => produce(name, `${label} output ${k}`));
  });
  graph.output.forEach((v, i) => {
    if (!known.has(v.name ?? '')) throw fail(`graph output ${i} '${v.name ?? ''}' is not a graph input, an initializer or the output of a node`);
  });
}
