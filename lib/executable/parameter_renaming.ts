/**
 * Renaming the parameters (and layers) of a graph or executable. An executable refers to
 * the model's weights by tf.Variable name; attached to another instance of
 * the model (whose variables tfjs numbered differently), its parameters take
 * that instance's names, so the optimizer, the host copies and the device
 * state all agree on them.
 */
import type { Graph } from '../ir/graph.js';
import type { Executable } from './executable.js';
import { nameRecord } from '../common/name_record.js';

/** `graph` with every parameter name passed through `rename`. */
export function renameGraphParameters(graph: Graph, rename: (name: string) => string): Graph {
  return {
    ...graph,
    values: graph.values.map((v) => (v.source.kind === 'param' ? { ...v, source: { ...v.source, name: rename(v.source.name) } } : v)),
    roles: {
      ...graph.roles,
      ...(graph.roles.gradients ? { gradients: nameRecord(Object.entries(graph.roles.gradients).map(([k, v]) => [rename(k), v])) } : {}),
    },
    assignments: graph.assignments.map((a) => ({ ...a, param: rename(a.param) })),
  };
}

/** `graph` with the layer every node is annotated with passed through `rename`. */
export function renameGraphLayers(graph: Graph, rename: (name: string) => string): Graph {
  return {
    ...graph,
    nodes: graph.nodes.map((n) => (n.annotations.layer === undefined ? n : { ...n, annotations: { ...n.annotations, layer: rename(n.annotations.layer) } })),
  };
}

/** `executable` with every parameter name (graph, gradients, buffers, replica groupings) passed through `rename`. */
export function renameExecutableParameters(executable: Executable, rename: (name: string) => string): Executable {
  return {
    ...executable,
    graph: renameGraphParameters(executable.graph, rename),
    replicaGroupings: nameRecord(Object.entries(executable.replicaGroupings).map(([k, g]) => [rename(k), g])),
  };
}
