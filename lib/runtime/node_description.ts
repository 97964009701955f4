/** How error messages name a node of a graph. */
import type { Node } from '../ir/graph.js';
import { scopedName } from '../trace/name_scope.js';

/** A node as error messages name it: id, kernel and layer. */
export function describeNode(node: Node): string {
  return `node #${node.id} ${scopedName(node.kernel, node.annotations.scope)}${node.annotations.layer ? ` in layer '${node.annotations.layer}'` : ''}`;
}
