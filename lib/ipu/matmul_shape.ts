/**
 * The matrix product a kernel amounts to, for the planner: matrix products
 * directly, convolutions and their gradients as Poplar plans them (the
 * output positions are the rows, the kernel taps times the input channels the
 * depth, the output channels the columns; depthwise convolutions as one group
 * per channel; the filter gradient with the positions as depth).
 */
import { sizeOf, type Graph, type Node, type ValueId } from '../ir/graph.js';
import { isViewNode } from '../ir/value_views.js';
import type { MatMulShape } from './matmul_plan.js';
import { POPTFJS_KERNELS } from '../backend/poptfjs_kernels/kernel_names.js';

/** Kernels that multiply matrices. */
const MATMUL_KERNELS: ReadonlySet<string> = new Set(['BatchMatMul', '_FusedMatMul', 'MatMul', POPTFJS_KERNELS.serializedMatMul]);

function inputOf(node: Node, name: string, fallback: number): ValueId {
  const index = node.inputNames ? node.inputNames.indexOf(name) : -1;
  return node.inputs[index >= 0 ? index : fallback]!;
}

function shapeOf(graph: Graph, node: Node, name: string, fallback: number): readonly number[] {
  return graph.values[inputOf(node, name, fallback)]!.shape;
}

/** True if `id` is a weight or constant, or a view of one. */
function isResident(graph: Graph, id: ValueId): boolean {
  const source = graph.values[id]!.source;
  if (source.kind === 'param' || source.kind === 'constant') return true;
  if (source.kind !== 'node') return false;
  const node = graph.nodes[source.node]!;
  return isViewNode(graph, node) && node.inputs.length > 0 && node.inputs.every((input) => isResident(graph, input));
}

function numbers(value: unknown, count: number, fallback: number): number[] {
  if (typeof value === 'number') return new Array<number>(count).fill(value);
  if (Array.isArray(value) && value.every((v) => typeof v === 'number')) return value.length === count ? (value as number[]) : (value as number[]).slice(-count);
  return new Array<number>(count).fill(fallback);
}

/** How much of the input a convolution's depth reads per row: taps overlap unless the strides are as large as the kernel. */
function inputReuse(kernel: readonly number[], strides: readonly number[]): number {
  const taps = kernel.reduce((a, b) => a * b, 1);
  const step = strides.reduce((a, b) => a * b, 1);
  return Math.min(1, step / taps);
}

/**
 * The product `node` computes, or undefined if it is not a matrix product or
 * convolution. `precision` and `partials` are those the node computes in.
 */
export function matMulShape(graph: Graph, node: Node, precision: MatMulShape['precision'], partials: MatMulShape['partials']): MatMulShape | undefined {
  const out = graph.values[node.outputs[0]!]!.shape;
  const kernel = node.kernel;
  if (MATMUL_KERNELS.has(kernel)) {
    const a = shapeOf(graph, node, 'a', 0);
    const b = shapeOf(graph, node, 'b', 1);
    const rows = out[out.length - 2] ?? 1;
    const columns = out[out.length - 1] ?? 1;
    const depth = node.attrs.transposeA === true ? a[a.length - 2]! : a[a.length - 1]!;
    const groups = sizeOf(out.slice(0, -2));
    const resident = { leftResident: isResident(graph, inputOf(node, 'a', 0)), rightResident: isResident(graph, inputOf(node, 'b', 1)) };
    // A weight shared by every group (a dense layer on a batch of sequences) makes one larger product.
    const aGroups = sizeOf(a.slice(0, -2));
    const bGroups = sizeOf(b.slice(0, -2));
    if (groups > 1 && bGroups === 1) return { groups: 1, rows: groups * rows, depth, columns, ...resident, precision, partials };
    if (groups > 1 && aGroups === 1) return { groups: 1, rows, depth, columns: groups * columns, ...resident, precision, partials };
    return { groups, rows, depth, columns, ...resident, precision, partials };
  }
  const spatial = kernel.includes('3D') ? 3 : 2;
  if (!/Conv[23]D|DepthwiseConv2d/.test(kernel)) return undefined;
  const channelsLast = node.attrs.dataFormat !== 'NCHW' && node.attrs.dataFormat !== 'channelsFirst' && node.attrs.dataFormat !== 'NCDHW';
  const strides = numbers(node.attrs.strides, spatial, 1);
  const positions = (shape: readonly number[]) => sizeOf(channelsLast ? shape.slice(0, -1) : [shape[0]!, ...shape.slice(2)]);
  const channels = (shape: readonly number[]) => (channelsLast ? shape[shape.length - 1]! : shape[1]!);
  const depthwise = kernel.includes('Depthwise');
  if (kernel.includes('BackpropFilter')) {
    const x = shapeOf(graph, node, 'x', 0);
    const dy = shapeOf(graph, node, 'dy', 1);
    const filter = out;
    const taps = filter.slice(0, spatial);
    const reuse = inputReuse(taps, strides);
    if (depthwise) return { groups: channels(x), rows: sizeOf(taps), depth: positions(dy), columns: filter[spatial + 1]!, leftReuse: reuse, precision, partials };
    return { groups: 1, rows: sizeOf(taps) * channels(x), depth: positions(dy), columns: channels(dy), leftReuse: reuse, precision, partials };
  }
  const filter = shapeOf(graph, node, 'filter', 1);
  const rightResident = isResident(graph, inputOf(node, 'filter', 1));
  const taps = filter.slice(0, spatial);
  const reuse = inputReuse(taps, strides);
  const common = { leftReuse: reuse, rightResident, precision, partials };
  if (kernel.includes('BackpropInput')) {
    const dy = shapeOf(graph, node, 'dy', 0);
    if (depthwise) return { groups: channels(out), rows: positions(out), depth: sizeOf(taps) * filter[spatial + 1]!, columns: 1, ...common };
    return { groups: 1, rows: positions(out), depth: sizeOf(taps) * channels(dy), columns: channels(out), inputChannels: channels(dy), ...common };
  }
  const x = shapeOf(graph, node, 'x', 0);
  if (depthwise) return { groups: channels(x), rows: positions(out), depth: sizeOf(taps), columns: filter[spatial + 1]!, ...common };
  return { groups: 1, rows: positions(out), depth: sizeOf(taps) * channels(x), columns: channels(out), inputChannels: channels(x), ...common };
}
