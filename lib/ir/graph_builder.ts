/**
 * Builds a {@link Graph} one value and node at a time (used by the tracer, the
 * ONNX importer and graph rewrites).
 */
import type { DataType } from '@tensorflow/tfjs';
import type { Assignment, AttrValue, ConstantData, Graph, GraphOutputs, Node, NodeAnnotations, NodeId, Value, ValueId, ValueSource } from './graph.js';

/** Appends values and nodes; {@link GraphBuilder.build} freezes the result. */
export class GraphBuilder {
  private readonly values: Value[] = [];
  private readonly nodes: Node[] = [];
  private readonly inputs: ValueId[] = [];
  private readonly assignments: Assignment[] = [];

  private addValue(shape: readonly number[], dtype: DataType, source: ValueSource, precision?: 'float16'): ValueId {
    const id = this.values.length;
    this.values.push({ id, shape: [...shape], dtype, source, ...(precision ? { precision } : {}) });
    return id;
  }

  /** Adds a graph input. */
  addInput(name: string, shape: readonly number[], dtype: DataType): ValueId {
    const id = this.addValue(shape, dtype, { kind: 'input', index: this.inputs.length, name });
    this.inputs.push(id);
    return id;
  }

  /** Adds a parameter (a tf.Variable of the model). */
  addParam(name: string, shape: readonly number[], dtype: DataType, trainable: boolean): ValueId {
    return this.addValue(shape, dtype, { kind: 'param', name, trainable });
  }

  /** Adds a constant (float16 with `precision`); its values are null when traced with shapes only. */
  addConstant(data: ConstantData | null, shape: readonly number[], dtype: DataType, precision?: 'float16'): ValueId {
    return this.addValue(shape, dtype, { kind: 'constant', data }, precision);
  }

  /** Adds a kernel call whose outputs have the given shapes and dtypes; returns the output ids. */
  addNode(
    kernel: string,
    inputNames: readonly string[] | null,
    inputs: readonly ValueId[],
    attrs: Record<string, AttrValue>,
    outputs: ReadonlyArray<{ shape: readonly number[]; dtype: DataType; precision?: 'float16' }>,
    annotations: NodeAnnotations,
  ): ValueId[] {
    const node: NodeId = this.nodes.length;
    const outputIds = outputs.map((o, i) => this.addValue(o.shape, o.dtype, { kind: 'node', node, output: i }, o.precision));
    this.nodes.push({ id: node, kernel, inputNames, inputs: [...inputs], attrs, outputs: outputIds, annotations });
    return outputIds;
  }

  /** Adds annotations to a node already built. */
  annotateNode(id: NodeId, annotations: Partial<NodeAnnotations>): void {
    const node = this.node(id);
    this.nodes[id] = { ...node, annotations: { ...node.annotations, ...annotations } };
  }

  /** Gives a control-flow node already built the graphs it runs (see {@link Node.bodies}). */
  setBodies(id: NodeId, bodies: readonly Graph[]): void {
    this.nodes[id] = { ...this.node(id), bodies: [...bodies] };
  }

  /** Records that the model writes `value` into parameter `param`. */
  addAssignment(param: string, value: ValueId): void {
    const existing = this.assignments.findIndex((a) => a.param === param);
    if (existing >= 0) this.assignments.splice(existing, 1);
    this.assignments.push({ param, value });
  }

  /** The value with the given id. */
  value(id: ValueId): Value {
    const v = this.values[id];
    if (!v) throw new RangeError(`no value %${id} in the graph`);
    return v;
  }

  /** The node with the given id. */
  node(id: NodeId): Node {
    const n = this.nodes[id];
    if (!n) throw new RangeError(`no node #${id} in the graph`);
    return n;
  }

  /** Number of nodes added so far. */
  get nodeCount(): number {
    return this.nodes.length;
  }

  /** The graph as built, with the given roles. */
  build(roles: GraphOutputs): Graph {
    return {
      values: this.values.slice(),
      nodes: this.nodes.slice(),
      inputs: this.inputs.slice(),
      roles,
      assignments: this.assignments.slice(),
    };
  }
}
