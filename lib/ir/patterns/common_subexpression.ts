/**
 * The `CommonSubexpression` pattern: nodes that call the same kernel on the
 * same inputs with the same attributes compute the same values, so every
 * such node after the first is removed and its uses go to the first.
 *
 * Random pseudo-kernels (`poptfjs.*`) are never merged: two draws are two
 * different values. Nodes in different blocks or on different IPUs are not
 * merged either, so merging never moves work or traffic between IPUs. A
 * merged value may live longer than either original (a backward node merged
 * into a forward one keeps its result alive across the step), which is why
 * the pattern is only in the `All` level.
 */
import type { AttrValue, Node } from '../graph.js';
import { mergeDuplicateNodes } from './merge_duplicate_nodes.js';
import type { Pattern } from './pattern.js';

/** JSON of an attribute value with object keys sorted, so equal attributes give equal text. */
function canonicalJson(value: AttrValue): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k]!)}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value);
}

/** What makes two nodes compute the same values (inputs already resolved). */
function computationKey(node: Node): string | undefined {
  if (node.kernel.startsWith('poptfjs.')) return undefined;
  return canonicalJson([node.kernel, node.inputNames ? [...node.inputNames] : null, [...node.inputs], { ...node.attrs }]);
}

/** Merges nodes that compute the same values. */
export const commonSubexpression: Pattern = {
  name: 'CommonSubexpression',
  description: 'merges nodes calling the same kernel on the same inputs with the same attributes (not random kernels)',
  level: 'All',
  apply: (graph) => mergeDuplicateNodes(graph, computationKey),
};
