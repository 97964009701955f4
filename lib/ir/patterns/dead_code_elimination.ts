/**
 * The `DeadCodeElimination` pattern: removes the nodes no output, loss,
 * gradient or assignment depends on (what other rewrites leave behind), and
 * renumbers the graph.
 */
import { eliminateDeadCode } from '../dead_code.js';
import type { Pattern } from './pattern.js';

/** Removes nodes whose results nobody uses; counts the nodes removed. */
export const deadCodeElimination: Pattern = {
  name: 'DeadCodeElimination',
  description: 'removes nodes that no output, loss, gradient or assignment depends on',
  level: 'Minimal',
  apply(graph) {
    const pruned = eliminateDeadCode(graph);
    return { graph: pruned, count: graph.nodes.length - pruned.nodes.length };
  },
};
