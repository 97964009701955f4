/**
 * The poptfjs IR: a small SSA graph of primitive tfjs kernels.
 *
 * Values have a static shape and dtype; nodes name a kernel (a tfjs kernel such
 * as `MatMul`, or a poptfjs pseudo-kernel such as `poptfjs.RandomUniform`) with
 * inputs, attributes and outputs, plus annotations stamped at trace time
 * (layer, pass, and the block/stage/IPU slot that placement fills in).
 */
import type { DataType } from '@tensorflow/tfjs';
import { PoptfjsError } from '../common/errors.js';
import type { HostOverlapMark } from './host_overlap.js';

/** Index of a value in {@link Graph.values}. */
export type ValueId = number;
/** Index of a node in {@link Graph.nodes}. */
export type NodeId = number;

/** Constant data held by the graph. */
export type ConstantData = Float32Array | Int32Array | Uint8Array | string[];

/** How a value comes into being. */
export type ValueSource =
  | { kind: 'input'; index: number; name: string }
  | { kind: 'param'; name: string; trainable: boolean }
  /** A captured tensor; `data` is null when the graph was traced with shapes only (values unknown). */
  | { kind: 'constant'; data: ConstantData | null }
  | { kind: 'node'; node: NodeId; output: number };

/** A value of the graph. */
export interface Value {
  readonly id: ValueId;
  readonly shape: readonly number[];
  readonly dtype: DataType;
  readonly source: ValueSource;
  /**
   * `'float16'` for a float32 value that holds IEEE float16 numbers (tfjs has
   * no float16 dtype): every element is exactly representable in float16 and
   * the device stores it in 2 bytes. Absent: the value is what its dtype says.
   */
  readonly precision?: 'float16';
}

/** An attribute value of a kernel call (JSON-compatible). */
export type AttrValue = null | boolean | number | string | AttrValue[] | { [key: string]: AttrValue };

/** Which part of a training step a node belongs to. */
export type Pass = 'forward' | 'backward';

/** Annotations stamped on a node when it was traced. */
export interface NodeAnnotations {
  /** The tfjs layer whose `call` was running, if any. */
  layer?: string;
  /** Forward pass, or backward pass (gradient) of the forward node `gradOf`. */
  pass: Pass;
  /** For a backward node: the forward node whose gradient it computes. */
  gradOf?: NodeId;
  /** The user block (`Block`, `BeginBlock`, `BlockFunction`) id. */
  block?: string;
  /** The IPU the block was placed on, when the annotation says so. */
  ipu?: number;
  /** True for nodes of the loss poptfjs computes after the model (placed with the model's last stage). */
  loss?: boolean;
  /** True if recomputation keeps this node's outputs (`ops.recomputationCheckpoint`) instead of recomputing them. */
  checkpoint?: boolean;
  /** The name scopes (`ops.NameScope`) the node was traced in, joined by `/`; a backward node has its forward node's. */
  scope?: string;
  /** Where in the user's code the node was made (`file:line:column`); a backward node has its forward node's. */
  source?: string;
  /** The op attributes (`ops.Attribute`) set where the node was traced, by attribute and key; a backward node has its forward node's. */
  attributes?: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /**
   * The proportion of a tile's memory this matrix product or convolution may take for temporaries
   * (`ops.setAvailableMemory`), for it and its backward nodes; absent: the IPU's.
   */
  availableMemoryProportion?: number;
  /**
   * The type of this matrix product's or convolution's partial sums (`ops.MultiConv`'s `partialsTypes`),
   * for it and its backward nodes; absent: the model's (`Precision.setPartialsType`).
   */
  partialsType?: 'float' | 'half';
  /** The `ops.MultiConv` group this convolution (or its backward convolution) belongs to. */
  multiConv?: MultiConvMember;
}

/** How the convolutions of an `ops.MultiConv` group are planned (poplibs' multi-convolution `planType`). */
export type MultiConvPlanType = 'Parallel' | 'Serial';

/** poplibs' default `cycleBackOff` of a parallel multi-convolution (lib/poplin/ConvPlan.cpp, `MultiPlanOptions`). */
export const DEFAULT_CYCLE_BACK_OFF = 0.1;

/** A convolution of an `ops.MultiConv` group. */
export interface MultiConvMember {
  /** The group, numbered from 0 in the order the groups were traced. */
  readonly group: number;
  /** The convolution's place in its group, from 0 in the order they were traced; its backward convolutions have the same. */
  readonly index: number;
  /** `Parallel`: the group's convolutions run at the same time on shares of the tiles; `Serial`: one after the other. */
  readonly planType: MultiConvPlanType;
  /** Tiles each convolution of a parallel group is given before the rest are shared out. */
  readonly perConvReservedTiles: number;
  /** How much slower than its fastest plan the largest convolution of a parallel group may run to leave tiles to the others (poplibs' `cycleBackOff`). */
  readonly cycleBackOff: number;
  /** poplibs' convolution dithering (`enableConvDithering`): the convolution is laid out from a start tile and in a direction its shape picks, not from tile 0 up. */
  readonly dithering?: boolean;
}

/** A kernel call. */
export interface Node {
  readonly id: NodeId;
  /** The tfjs kernel name, or a `poptfjs.*` pseudo-kernel. */
  readonly kernel: string;
  /** Input names of the kernel (`x`, `a`, `b`, ...), or null when the kernel takes a positional list. */
  readonly inputNames: readonly string[] | null;
  readonly inputs: readonly ValueId[];
  readonly attrs: Readonly<Record<string, AttrValue>>;
  readonly outputs: readonly ValueId[];
  readonly annotations: NodeAnnotations;
  /**
   * The graphs a control-flow node runs, each traced once with its own values
   * and nodes: `poptfjs.ForLoop` holds its body, `poptfjs.Cond` its then and
   * else branches. Each body's inputs are a run of the node's inputs (the
   * layouts are described with `POPTFJS_KERNELS`) and its outputs become the
   * node's outputs. Absent for every other node.
   */
  readonly bodies?: readonly Graph[];
}

/** A parameter update done in place by the model (e.g. batch-norm running statistics). */
export interface Assignment {
  /** The parameter (tf.Variable name) being written. */
  readonly param: string;
  /** The value written. */
  readonly value: ValueId;
}

/** The values a graph exposes, by role. */
export interface GraphOutputs {
  /** The model's outputs, in order. */
  readonly outputs: readonly ValueId[];
  /** The scalar loss of a training graph. */
  readonly loss?: ValueId;
  /** Gradients of the (scaled) loss, by trainable parameter name. */
  readonly gradients?: Readonly<Record<string, ValueId>>;
  /** The scalar loss-scale input of a training graph. */
  readonly lossScale?: ValueId;
  /** The model inputs and outputs whose host transfers overlap compute on the I/O tiles (`ops.setOverlapForInput` / `setOverlapForOutput`); absent: none. */
  readonly hostOverlap?: readonly HostOverlapMark[];
}

/** A traced graph. Values and nodes are in topological order. */
export interface Graph {
  readonly values: readonly Value[];
  readonly nodes: readonly Node[];
  /** Graph inputs (the model's inputs, then extra inputs like the loss scale), in order. */
  readonly inputs: readonly ValueId[];
  readonly roles: GraphOutputs;
  readonly assignments: readonly Assignment[];
}

/** Number of elements of a shape. */
export function sizeOf(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

/** Bytes per element of a dtype (the IPU holds float32 and int32 in 4 bytes, bool in 1). */
export function bytesPerElement(dtype: DataType): number {
  switch (dtype) {
    case 'bool':
      return 1;
    case 'complex64':
      return 8;
    default:
      return 4;
  }
}

/** Bytes the device holds for one element of `value`: 2 for float16 values, else {@link bytesPerElement} of its dtype. */
export function valueElementBytes(value: Value): number {
  return value.precision === 'float16' ? 2 : bytesPerElement(value.dtype);
}

/**
 * The values of a constant; a clear error for a constant of a graph traced
 * with shapes only, which has none (such a graph can be planned, not run or saved).
 */
export function constantData(value: Value): ConstantData {
  if (value.source.kind !== 'constant') throw new PoptfjsError(`internal error: %${value.id} is not a constant`, { type: 'compile' });
  if (value.source.data === null) {
    throw new PoptfjsError(
      `constant %${value.id} (${value.dtype}[${value.shape.join(',')}]) has no values: the graph was traced with shapes only, for plan(); ` +
        'it can be planned but not run, folded or saved. Wrap the model with trainingModel or inferenceModel to run it',
      { type: 'compile' },
    );
  }
  return value.source.data;
}

/** All parameter values of a graph, by name. */
export function paramValues(graph: Graph): Map<string, Value> {
  const params = new Map<string, Value>();
  for (const v of graph.values) if (v.source.kind === 'param') params.set(v.source.name, v);
  return params;
}

/** The nodes that read each value, in graph order: of all the graph's nodes, or of those `include` keeps. */
export function readersOfValues(graph: Graph, include: (node: Node) => boolean = () => true): Map<ValueId, Node[]> {
  const readers = new Map<ValueId, Node[]>();
  for (const node of graph.nodes) {
    if (!include(node)) continue;
    for (const id of node.inputs) {
      const known = readers.get(id);
      if (known) known.push(node);
      else readers.set(id, [node]);
    }
  }
  return readers;
}

/** The values the graph hands back: outputs, loss, gradients, assignments. */
export function rootValues(graph: Graph): ValueId[] {
  const roots = [...graph.roles.outputs];
  if (graph.roles.loss !== undefined) roots.push(graph.roles.loss);
  if (graph.roles.gradients) roots.push(...Object.values(graph.roles.gradients));
  for (const a of graph.assignments) roots.push(a.value);
  return roots;
}
