/**
 * What poptfjs knows about one kernel, as one record (tfjs's kernel registry
 * keeps one `KernelConfig` per kernel and backend; the catalogue keeps one
 * record per kernel name): what kind of work it is, the shapes of its
 * outputs, what it costs on an IPU, how many FLOPs it counts, its host
 * implementation when poptfjs supplies one, and what the float16 inference
 * and the memory plans need to know of it.
 *
 * The rules are written against a kernel call as the catalogue sees it
 * ({@link KernelNode}: shapes, dtypes, bytes and attributes) and, for costs,
 * against the primitives of the cost model ({@link KernelCostModel}), which
 * lib/ipu implements for one IPU: the catalogue says what a kernel does, the
 * cost model what such work takes.
 */
import type * as tf from '@tensorflow/tfjs';
import type { KernelShapeRule } from '../shape_only/rules/kernel_shape_rule.js';
import type { HostKernel } from '../poptfjs_kernels/backend_kernel.js';

/**
 * What kind of work a kernel is:
 * - `view`: another way of looking at its inputs' storage (reshape, transpose, slice, concatenation), no work;
 * - `move`: data copied to new places (pads, tiles, resizes, copies);
 * - `element-wise`: one result per element (arithmetic, activations, casts, normalization);
 * - `reduction`: many elements to fewer (sums, maxima, softmax's sums, pooling windows, searches);
 * - `product`: a matrix product or convolution, planned on the AMP units;
 * - `gather/scatter`: rows read from or written to places an index names;
 * - `control`: runs bodies of kernels (loops, conditionals);
 * - `random`: draws from the run's random generator;
 * - `host`: computes on, or sends to, the host;
 * - `fill`: one value repeated, a broadcast of a scalar (a view of no storage).
 */
export type KernelCategory = 'view' | 'move' | 'element-wise' | 'reduction' | 'product' | 'gather/scatter' | 'control' | 'random' | 'host' | 'fill';

/** A tensor a kernel call reads or makes. */
export interface KernelTensor {
  readonly shape: readonly number[];
  readonly dtype: tf.DataType;
  /** Elements (the product of the shape). */
  readonly elements: number;
  /** Bytes on the device (two an element for float16 values). */
  readonly bytes: number;
}

/** A kernel call as the catalogue's rules see it: a node of a graph, by its tensors and attributes. */
export interface KernelNode {
  readonly kernel: string;
  readonly attrs: Readonly<Record<string, unknown>>;
  readonly inputs: readonly KernelTensor[];
  readonly outputs: readonly KernelTensor[];
  /** The input named `name` (by the node's input names), or the one at `fallback` when it has no such name. */
  input(name: string, fallback: number): KernelTensor;
  /** True if the node names one of its inputs `name`. */
  hasInput(name: string): boolean;
  /** The FLOPs of each of the node's bodies (a loop's body, a conditional's branches); none for other nodes. */
  bodyFlops(): readonly number[];
}

/** Tile cycles per element of an element-wise operation: in float16 and in float32. */
export type CyclesPerElement = readonly [float16: number, float32: number];

/** The parts of a cost a rule can write directly. */
export interface CostParts {
  /** Tile cycles computing (the busiest tile). */
  readonly compute: number;
  /** Tile cycles exchanging between tiles (default 0). */
  readonly exchange?: number;
  /** Supersteps, each ending in a sync of the IPU's tiles. */
  readonly supersteps: number;
  /** Temporary memory over the IPU's tiles, bytes (default 0). */
  readonly temporaryBytes?: number;
  /** Tile cycles sending inputs to the host and receiving outputs from it. */
  readonly host?: { readonly toHost: number; readonly fromHost: number };
}

/**
 * The primitives of the cost model on the IPU a node runs on, in which cost
 * rules are written (`Cost` is the cost model's own type, lib/ipu's
 * `KernelCost`).
 */
export interface KernelCostModel<Cost> {
  /** No work at all. */
  readonly free: Cost;
  /** The tiles the work spreads over. */
  readonly tiles: number;
  /** The node computes in float16 (all its floating-point inputs are float16 values). */
  readonly float16: boolean;
  /** Fixed cycles of a vertex on a tile. */
  readonly vertexCycles: number;
  /** Tile cycles to copy `bytes` within a tile's memory. */
  copyCycles(bytes: number): number;
  /** Tile cycles to exchange `bytes` to or from one tile. */
  exchangeCycles(bytes: number): number;
  /** Tile cycles to send `bytes` over the host link. */
  hostCycles(bytes: number): number;
  /** A cost from its parts. */
  parts(parts: CostParts): Cost;
  /** One element-wise pass over `elements` (default: the outputs') at `cycles` per element, its smaller operands broadcast to the tiles. */
  elementwise(cycles: CyclesPerElement, elements?: number): Cost;
  /** A reduction of `elements` to `outputs` results, in the node's precision or `float32`: partial results on each tile, exchanged and reduced again. */
  reduction(elements: number, outputs: number, precision?: 'float32'): Cost;
  /** The node's matrix product or convolution as the planner plans it, serialized as `serialization` says, with an element-wise `epilogue` (a fused bias and activation). */
  product(options?: { readonly serialization?: unknown; readonly epilogue?: CyclesPerElement }): Cost;
  /** The summed cost of each of the node's bodies. */
  bodyCosts(): readonly Cost[];
  /** The most bytes one of the node's bodies holds while it runs. */
  bodyWorkingBytes(): number;
  /** Costs one after another (temporary memory: the largest). */
  sequence(...costs: Cost[]): Cost;
  /** The longest of `costs` (by cycles; the first of equals). */
  longest(costs: readonly Cost[]): Cost;
  /** `cost` run `times` times, holding `temporaryBytes`. */
  repeat(cost: Cost, times: number, temporaryBytes: number): Cost;
}

/** How long a kernel takes and what it holds, in the cost model's primitives. */
export type CostRule = <Cost>(node: KernelNode, model: KernelCostModel<Cost>) => Cost;

/** The FLOPs a kernel call counts (two a multiply-accumulate). */
export type FlopRule = (node: KernelNode) => number;

/**
 * What the float16 inference needs to know of a kernel's floating-point outputs:
 * - `weak`: they do not decide the precision of what reads them (random draws, drawn in the dtype of their reader);
 * - `weak-in-backward`: so when only the backward pass reads them (fills tfjs's gradient functions make);
 * - `float16`: they are float16 whatever the inputs (a float16 cast).
 */
export type PrecisionRule = 'weak' | 'weak-in-backward' | 'float16';

/** What a kernel multiplies, for the planner and the FLOP count. */
export type ProductKind = 'matrices' | 'convolution';

/** One kernel, as poptfjs knows it. */
export interface KernelRecord {
  /** The kernel's name, as tfjs (or poptfjs, `poptfjs.*`) registers it. */
  readonly name: string;
  readonly category: KernelCategory;
  /**
   * The shapes and dtypes of its outputs, as the shape-only backend plans
   * them; absent for the kernels no backend runs (poptfjs's control flow and
   * random draws, which the tracer makes and the interpreter runs).
   */
  readonly shape?: KernelShapeRule;
  readonly cost: CostRule;
  readonly flops: FlopRule;
  /** Its implementation for the backends poptfjs computes on, when poptfjs supplies it (its own kernels). */
  readonly host?: HostKernel;
  /**
   * Its outputs are views of its inputs, taking no memory of their own: always (`true`), or when the
   * call is such (a `Tile` that only repeats dimensions of size 1).
   */
  readonly view?: true | ((node: KernelNode) => boolean);
  /** Its output shares its input's data on the host too (tfjs reshapes without copying; it copies transposes, slices and concatenations). */
  readonly hostView?: boolean;
  readonly precision?: PrecisionRule;
  /** For a product: what it multiplies. */
  readonly product?: ProductKind;
  /** Why its cost rule is the one it is, where the rule is an approximation or costs nothing. */
  readonly costNote?: string;
}
