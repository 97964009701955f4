/**
 * The edits a pattern makes to a graph, recorded without touching the graph:
 * insert kernel calls before a node, remove a node while naming the values
 * that stand in for its outputs, and send every use of one value (node
 * inputs and the graph's roles: outputs, loss, gradients, assignments) to
 * another. {@link GraphEditor.build} then lays out a new graph with values and
 * nodes renumbered densely in topological order, and checks that every value
 * is computed before it is used.
 *
 * Values removed from use stay where they are; dead nodes are the business of
 * the `DeadCodeElimination` pattern.
 */
import type { DataType } from '@tensorflow/tfjs';
import { PoptfjsError } from '../../common/errors.js';
import type { AttrValue, ConstantData, Graph, GraphOutputs, Node, NodeAnnotations, NodeId, Value, ValueId } from '../graph.js';
import { sameShape } from './kernel_output_shapes.js';
import { nameRecord } from '../../common/name_record.js';

/** A kernel call to insert into a graph. */
export interface NodeSpec {
  /** The tfjs kernel name. */
  readonly kernel: string;
  /** Input names of the kernel, or null when it takes a positional list. */
  readonly inputNames: readonly string[] | null;
  /** The input values, in the order of `inputNames`. */
  readonly inputs: readonly ValueId[];
  /** The kernel's attributes. */
  readonly attrs: Readonly<Record<string, AttrValue>>;
  /** Shape and dtype of each output. */
  readonly outputs: ReadonlyArray<{ readonly shape: readonly number[]; readonly dtype: DataType }>;
  /** Defaults to the annotations of the node it is inserted before. */
  readonly annotations?: NodeAnnotations;
}

function rewriteError(message: string): PoptfjsError {
  return new PoptfjsError(`internal error in a graph rewrite: ${message}`, { type: 'compile' });
}

/** Records the edits of one pattern application on a graph and builds the edited graph. */
export class GraphEditor {
  private readonly values: Value[];
  /** The graph's nodes, then the inserted ones; a node's id is its index here. */
  private readonly nodes: Node[];
  /** Inserted nodes, by the original node they come before, in order. */
  private readonly insertedBefore = new Map<NodeId, NodeId[]>();
  /** For each inserted node, the original node it was inserted before. */
  private readonly anchorOf = new Map<NodeId, NodeId>();
  private readonly removed = new Set<NodeId>();
  private readonly substitutes = new Map<ValueId, ValueId>();

  /** Starts recording edits of `graph`, which is never modified. */
  constructor(private readonly graph: Graph) {
    this.values = graph.values.slice();
    this.nodes = graph.nodes.slice();
  }

  /** The value `id` (of the graph, or added by an edit). */
  value(id: ValueId): Value {
    const v = this.values[id];
    if (!v) throw rewriteError(`no value %${id}`);
    return v;
  }

  /** The value that now stands in for `id` (itself unless its uses were sent elsewhere). */
  resolve(id: ValueId): ValueId {
    let current = id;
    for (let steps = 0; steps <= this.values.length; steps++) {
      const next = this.substitutes.get(current);
      if (next === undefined) return current;
      current = next;
    }
    throw rewriteError(`the uses of %${id} are sent around in a cycle`);
  }

  /**
   * The nodes of the edited graph in order, each with its inputs resolved
   * when it is reached. Nodes removed or inserted before the current node
   * while iterating are skipped.
   */
  *liveNodes(): Generator<Node> {
    for (const original of this.graph.nodes) {
      for (const id of [...(this.insertedBefore.get(original.id) ?? []), original.id]) {
        if (!this.removed.has(id)) yield this.resolvedNode(id);
      }
    }
  }

  /** How many times each value is read: by the live nodes' inputs, and once for each of `roots` (the graph's outputs and other roles). */
  useCounts(roots: readonly ValueId[]): Map<ValueId, number> {
    const uses = new Map<ValueId, number>();
    const use = (id: ValueId) => uses.set(id, (uses.get(id) ?? 0) + 1);
    for (const node of this.liveNodes()) node.inputs.forEach(use);
    roots.forEach(use);
    return uses;
  }

  /** The live node computing value `id` (inputs resolved), or undefined for inputs, parameters and constants. */
  producer(id: ValueId): Node | undefined {
    const source = this.value(id).source;
    if (source.kind !== 'node' || this.removed.has(source.node)) return undefined;
    return this.resolvedNode(source.node);
  }

  /** Adds a constant and returns its value id. */
  addConstant(data: ConstantData, shape: readonly number[], dtype: DataType): ValueId {
    const id = this.values.length;
    this.values.push({ id, shape: [...shape], dtype, source: { kind: 'constant', data } });
    return id;
  }

  /** Inserts a kernel call right before node `anchor`; returns its output value ids. */
  insertBefore(anchor: NodeId, spec: NodeSpec): ValueId[] {
    const anchorNode = this.nodes[anchor];
    if (!anchorNode) throw rewriteError(`no node #${anchor} to insert before`);
    const id = this.nodes.length;
    const outputs = spec.outputs.map((o, output) => {
      const valueId = this.values.length;
      this.values.push({ id: valueId, shape: [...o.shape], dtype: o.dtype, source: { kind: 'node', node: id, output } });
      return valueId;
    });
    this.nodes.push({
      id,
      kernel: spec.kernel,
      inputNames: spec.inputNames ? [...spec.inputNames] : null,
      inputs: [...spec.inputs],
      attrs: { ...spec.attrs },
      outputs,
      annotations: { ...(spec.annotations ?? anchorNode.annotations) },
    });
    const original = this.anchorOf.get(anchor) ?? anchor;
    const list = this.insertedBefore.get(original) ?? [];
    const at = original === anchor ? list.length : list.indexOf(anchor);
    list.splice(at, 0, id);
    this.insertedBefore.set(original, list);
    this.anchorOf.set(id, original);
    return outputs;
  }

  /**
   * Sends every use of `from` (node inputs and graph roles) to `to`, which
   * must have the same shape and dtype. A node output inserted by this editor
   * that stands in for a float16 value is float16 too (the node making it
   * rounds its result).
   */
  replaceUses(from: ValueId, to: ValueId): void {
    const a = this.value(from);
    const b = this.value(this.resolve(to));
    if (a.dtype !== b.dtype || !sameShape(a.shape, b.shape)) {
      throw rewriteError(`cannot use %${b.id}: ${b.dtype}[${b.shape.join(',')}] in place of %${a.id}: ${a.dtype}[${a.shape.join(',')}]`);
    }
    if (b.id === from) return;
    if (a.precision === 'float16' && b.id >= this.graph.values.length && b.source.kind === 'node') this.values[b.id] = { ...b, precision: 'float16' };
    this.substitutes.set(from, b.id);
  }

  /** Removes node `id`; `replacements[i]` takes over the uses of its output `i`. */
  removeNode(id: NodeId, replacements: readonly ValueId[]): void {
    const node = this.nodes[id];
    if (!node) throw rewriteError(`no node #${id} to remove`);
    if (replacements.length !== node.outputs.length) {
      throw rewriteError(`node #${id} ${node.kernel} has ${node.outputs.length} output(s), got ${replacements.length} replacement(s)`);
    }
    node.outputs.forEach((out, i) => this.replaceUses(out, replacements[i]!));
    this.removed.add(id);
    // A recomputation checkpoint's values stay checkpoints: the nodes that now make them keep them.
    if (node.annotations.checkpoint) {
      for (const replacement of replacements) {
        const source = this.value(this.resolve(replacement)).source;
        if (source.kind !== 'node') continue;
        const maker = this.nodes[source.node]!;
        this.nodes[source.node] = { ...maker, annotations: { ...maker.annotations, checkpoint: true } };
      }
    }
  }

  /** The edited graph, renumbered in topological order. */
  build(): Graph {
    const valueIds = new Map<ValueId, ValueId>();
    const nodeIds = new Map<NodeId, NodeId>();
    const values: Value[] = [];
    const nodes: Node[] = [];
    const place = (id: ValueId): ValueId => {
      const resolved = this.resolve(id);
      const known = valueIds.get(resolved);
      if (known !== undefined) return known;
      const v = this.value(resolved);
      if (v.source.kind === 'node') {
        throw rewriteError(`%${resolved} (output of ${this.nodes[v.source.node]!.kernel}) is used before it is computed or after its node was removed`);
      }
      valueIds.set(resolved, values.length);
      values.push({ ...v, id: values.length });
      return values.length - 1;
    };
    for (const id of this.graph.inputs) place(id);
    const order: NodeId[] = [];
    for (const original of this.graph.nodes) order.push(...(this.insertedBefore.get(original.id) ?? []), original.id);
    for (const id of order) {
      if (this.removed.has(id)) continue;
      const node = this.nodes[id]!;
      const inputs = node.inputs.map(place);
      const newId = nodes.length;
      nodeIds.set(id, newId);
      const outputs = node.outputs.map((out, output) => {
        const v = this.value(out);
        valueIds.set(out, values.length);
        values.push({ id: values.length, shape: v.shape, dtype: v.dtype, source: { kind: 'node', node: newId, output }, ...(v.precision ? { precision: v.precision } : {}) });
        return values.length - 1;
      });
      nodes.push({ ...node, id: newId, inputs, outputs });
    }
    const renumbered = nodes.map((node) => ({ ...node, annotations: this.remapGradOf(node.annotations, nodeIds) }));
    const { roles } = this.graph;
    const newRoles: GraphOutputs = {
      outputs: roles.outputs.map(place),
      ...(roles.loss !== undefined ? { loss: place(roles.loss) } : {}),
      ...(roles.gradients ? { gradients: nameRecord(Object.entries(roles.gradients).map(([k, v]) => [k, place(v)])) } : {}),
      ...(roles.lossScale !== undefined ? { lossScale: valueIds.get(roles.lossScale)! } : {}),
      ...(roles.hostOverlap ? { hostOverlap: roles.hostOverlap } : {}),
    };
    return {
      values,
      nodes: renumbered,
      inputs: this.graph.inputs.map((id) => valueIds.get(id)!),
      roles: newRoles,
      assignments: this.graph.assignments.map((a) => ({ param: a.param, value: place(a.value) })),
    };
  }

  private resolvedNode(id: NodeId): Node {
    const node = this.nodes[id]!;
    return { ...node, inputs: node.inputs.map((v) => this.resolve(v)) };
  }

  /**
   * `gradOf` renumbered. A removed forward node is replaced by the node now
   * computing its first output, else by the node it came from (the producer
   * of its first computed input), so a backward node keeps pointing at a
   * forward node of the same place in the model.
   */
  private remapGradOf(annotations: NodeAnnotations, nodeIds: ReadonlyMap<NodeId, NodeId>): NodeAnnotations {
    if (annotations.gradOf === undefined) return annotations;
    const { gradOf: _dropped, ...rest } = annotations;
    const target = this.survivingForwardNode(annotations.gradOf, nodeIds, new Set());
    return target === undefined ? rest : { ...rest, gradOf: target };
  }

  private survivingForwardNode(id: NodeId, nodeIds: ReadonlyMap<NodeId, NodeId>, seen: Set<NodeId>): NodeId | undefined {
    const kept = nodeIds.get(id);
    if (kept !== undefined || seen.has(id)) return kept;
    seen.add(id);
    const node = this.nodes[id];
    if (!node) return undefined;
    const first = node.outputs[0];
    const replacement = first === undefined ? undefined : this.value(this.resolve(first)).source;
    if (replacement?.kind === 'node' && replacement.node !== id) {
      const found = this.survivingForwardNode(replacement.node, nodeIds, seen);
      if (found !== undefined) return found;
    }
    for (const input of node.inputs) {
      const source = this.value(input).source;
      if (source.kind !== 'node') continue;
      const found = this.survivingForwardNode(source.node, nodeIds, seen);
      if (found !== undefined) return found;
    }
    return undefined;
  }
}
