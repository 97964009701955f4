/**
 * Views: kernels whose output is another way of looking at their inputs'
 * storage, not new data. On the IPU these are Poplar tensor views (reshape,
 * dimension shuffles, slices, concatenations, broadcasts), which PopART makes
 * of its view-changing ops when it in-places them (`ReshapeInplace`,
 * `TransposeInplace`, `SliceInplace`, `ConcatInplace`, ...), and broadcasts.
 * A fill (one value repeated, as tfjs's gradient functions make them) is a
 * broadcast of a scalar constant, a view of no storage.
 * A view takes no memory and no compute; it keeps the storage it looks at
 * alive for as long as it is used.
 */
import { FILL_KERNEL, type Graph, type Node, type ValueId } from './graph.js';

/** The kernels whose outputs are always views of their inputs. */
const VIEW_KERNELS: ReadonlySet<string> = new Set([
  'Reshape',
  'Identity',
  'ExpandDims',
  'Squeeze',
  'Transpose',
  'Slice',
  'StridedSlice',
  'Concat',
  'Pack',
  'Unpack',
  'SplitV',
  'Reverse',
  'BroadcastTo',
  FILL_KERNEL,
]);

/**
 * True if `node`'s outputs are views of its inputs: a view kernel, or a
 * `Tile` that only repeats dimensions of size 1 (a broadcast).
 */
export function isViewNode(graph: Graph, node: Node): boolean {
  if (VIEW_KERNELS.has(node.kernel)) return true;
  if (node.kernel !== 'Tile') return false;
  const shape = graph.values[node.inputs[0]!]!.shape;
  const reps = node.attrs.reps;
  return Array.isArray(reps) && reps.every((r, i) => r === 1 || shape[i] === 1);
}

/**
 * For each value, the values whose storage it occupies: itself, or for the
 * output of a view, the storage of the view's inputs (followed through
 * chains of views). Inputs, parameters and constants are their own storage.
 */
export function storageRoots(graph: Graph): ReadonlyArray<readonly ValueId[]> {
  const roots: ValueId[][] = graph.values.map((v) => [v.id]);
  for (const node of graph.nodes) {
    if (!isViewNode(graph, node)) continue;
    const viewed = [...new Set(node.inputs.flatMap((id) => roots[id]!))];
    for (const id of node.outputs) roots[id] = viewed;
  }
  return roots;
}
