/**
 * What crosses between threads when the units of a placement run on worker
 * IPUs: for each unit, the IPU whose worker runs it, the graph inputs and
 * parameters its nodes read, the values it needs from units on other IPUs,
 * and the values it must send back (roots for the main thread, values for
 * other IPUs). Values passed between units on the same IPU, such as a
 * pipeline stage's stashed activations for its backward unit, stay in that
 * worker.
 */
import { rootValues, type Graph, type Node, type ValueId } from '../../ir/graph.js';
import type { Placement } from '../../strategy/placement.js';

/** The dataflow of one unit. */
export interface UnitFlow {
  /** The IPU (within a replica) whose worker runs the unit: its first IPU. */
  readonly ipu: number;
  /** Its nodes, in graph order. */
  readonly nodes: readonly Node[];
  /** Indices of the graph inputs its nodes read. */
  readonly inputs: readonly number[];
  /** Parameters its nodes read. */
  readonly params: readonly string[];
  /** Values made on other IPUs that its nodes read. */
  readonly imports: readonly ValueId[];
  /** Values it makes that the main thread (roots) or other IPUs need. */
  readonly exports: readonly ValueId[];
  /** Parameters it writes (buffers). */
  readonly assigns: readonly string[];
}

/** The dataflow of every unit of a placement. */
export class UnitDataflow {
  /** By unit index. */
  readonly units: readonly UnitFlow[];
  /** The IPUs that run at least one node, ascending. */
  readonly ipus: readonly number[];
  /** The values the main thread takes (outputs, loss, gradients, buffer writes). */
  readonly roots: ReadonlySet<ValueId>;

  constructor(graph: Graph, placement: Placement) {
    const unitOfNode = placement.nodeUnits;
    const ipuOf = (unit: number) => placement.units[unit]!.ipus[0] ?? 0;
    const producer = (id: ValueId): number | undefined => {
      const source = graph.values[id]!.source;
      return source.kind === 'node' ? unitOfNode[source.node] : undefined;
    };
    const nodes: Node[][] = placement.units.map(() => []);
    for (const node of graph.nodes) nodes[unitOfNode[node.id]!]!.push(node);
    const inputs = placement.units.map(() => new Set<number>());
    const params = placement.units.map(() => new Set<string>());
    const imports = placement.units.map(() => new Set<ValueId>());
    const exports = placement.units.map(() => new Set<ValueId>());
    const assigns = placement.units.map(() => new Set<string>());
    nodes.forEach((unitNodes, u) => {
      for (const node of unitNodes) {
        for (const id of node.inputs) {
          const source = graph.values[id]!.source;
          if (source.kind === 'input') inputs[u]!.add(source.index);
          else if (source.kind === 'param') params[u]!.add(source.name);
          else if (source.kind === 'node') {
            const from = producer(id)!;
            if (ipuOf(from) !== ipuOf(u)) {
              imports[u]!.add(id);
              exports[from]!.add(id);
            }
          }
        }
      }
    });
    this.roots = new Set(rootValues(graph));
    for (const id of this.roots) {
      const from = producer(id);
      if (from !== undefined) exports[from]!.add(id);
    }
    for (const a of graph.assignments) {
      const from = producer(a.value);
      assigns[from ?? 0]!.add(a.param);
    }
    this.units = placement.units.map((_, u) => ({
      ipu: ipuOf(u),
      nodes: nodes[u]!,
      inputs: [...inputs[u]!].sort((a, b) => a - b),
      params: [...params[u]!],
      imports: [...imports[u]!],
      exports: [...exports[u]!],
      assigns: [...assigns[u]!],
    }));
    this.ipus = [...new Set(this.units.filter((u) => u.nodes.length > 0).map((u) => u.ipu))].sort((a, b) => a - b);
  }

  /** The values that cross between threads: inputs, parameters, roots and values passed between IPUs. */
  crossingValues(graph: Graph): ValueId[] {
    const crossing = new Set<ValueId>(this.roots);
    for (const unit of this.units) {
      for (const id of unit.imports) crossing.add(id);
      for (const node of unit.nodes) {
        for (const id of node.inputs) if (graph.values[id]!.source.kind === 'input' || graph.values[id]!.source.kind === 'param') crossing.add(id);
      }
    }
    return [...crossing];
  }
}
