/**
 * FLOPs and bytes of each IR node, the inputs of the cost model.
 *
 * Matrix products and convolutions count two FLOPs per multiply-accumulate;
 * element-wise kernels one FLOP per output element (transcendental functions
 * a few); reductions one per input element. Bytes are what the node reads and
 * writes. Counts depend only on shapes, so they are exact for a static graph.
 */
import { sizeOf, valueElementBytes, type Graph, type Node, type Value } from './graph.js';
import { isViewNode } from './value_views.js';
import { POPTFJS_KERNELS } from '../backend/poptfjs_kernels/kernel_names.js';

/** The work of one node. */
export interface NodeCost {
  readonly flops: number;
  /** Bytes read (inputs) plus bytes written (outputs). */
  readonly bytes: number;
}

const TRANSCENDENTAL = new Set([
  'Exp',
  'Log',
  'Log1p',
  'Expm1',
  'Tanh',
  'Sigmoid',
  'Softplus',
  'Erf',
  'Pow',
  'Sin',
  'Cos',
  'Tan',
  'Asin',
  'Acos',
  'Atan',
  'Atan2',
  'Sinh',
  'Cosh',
  'Asinh',
  'Acosh',
  'Atanh',
  'Elu',
  'Selu',
  'Sqrt',
  'Rsqrt',
]);
const TRANSCENDENTAL_FLOPS = 4;

const REDUCTIONS = new Set(['Sum', 'Mean', 'Max', 'Min', 'Prod', 'All', 'Any', 'ArgMax', 'ArgMin', 'Cumsum', 'Cumprod', 'UnsortedSegmentSum']);
const DATA_MOVEMENT = new Set([
  'Reshape',
  'Identity',
  'Transpose',
  'Slice',
  'StridedSlice',
  'Concat',
  'Pack',
  'Unpack',
  'SplitV',
  'Tile',
  'GatherV2',
  'GatherNd',
  'PadV2',
  'MirrorPad',
  'Reverse',
  'Cast',
  'ExpandDims',
  'Squeeze',
  'Fill',
  'OnesLike',
  'ZerosLike',
  'BroadcastTo',
  'ScatterNd',
  'OneHot',
  'TensorScatterUpdate',
  'SpaceToBatchND',
  'BatchToSpaceND',
  'DepthToSpace',
]);

function graphValue(graph: Graph, id: number): Value {
  return graph.values[id]!;
}

function inputShape(graph: Graph, node: Node, name: string, fallback: number): readonly number[] {
  const index = node.inputNames ? node.inputNames.indexOf(name) : -1;
  return graphValue(graph, node.inputs[index >= 0 ? index : fallback]!).shape;
}

function matMulFlops(graph: Graph, node: Node): number {
  const a = inputShape(graph, node, 'a', 0);
  const transposeA = node.attrs.transposeA === true;
  const k = transposeA ? a[a.length - 2]! : a[a.length - 1]!;
  return 2 * k * sizeOf(graphValue(graph, node.outputs[0]!).shape);
}

/** Multiply-accumulates of a convolution, from its filter and the larger of its image-shaped tensors. */
function convolutionFlops(graph: Graph, node: Node): number {
  const filter =
    node.kernel.startsWith('Conv2DBackpropFilter') || node.kernel.startsWith('DepthwiseConv2dNativeBackpropFilter')
      ? ((node.attrs.filterShape as number[] | undefined) ?? graphValue(graph, node.outputs[0]!).shape)
      : inputShape(graph, node, 'filter', 1);
  const depthwise = node.kernel.includes('Depthwise');
  const [kh = 1, kw = 1, inChannels = 1] = filter;
  const perOutput = depthwise ? kh * kw : kh * kw * inChannels;
  // The "output" whose every element costs `perOutput` MACs: the forward output, or dy for the gradients.
  const dyName = node.inputNames?.includes('dy') ? 'dy' : undefined;
  const spatial = dyName ? inputShape(graph, node, dyName, 0) : graphValue(graph, node.outputs[0]!).shape;
  return 2 * perOutput * sizeOf(spatial);
}

function poolingFlops(graph: Graph, node: Node): number {
  const size = (node.attrs.filterSize as number[] | number | undefined) ?? 1;
  const window = Array.isArray(size) ? size.reduce((a, b) => a * b, 1) : size * size;
  return window * sizeOf(graphValue(graph, node.outputs[0]!).shape);
}

/**
 * The FLOPs of one node. A loop counts its body's `count` times; a cond its
 * larger branch's (which one runs is decided on the device).
 */
export function nodeFlops(graph: Graph, node: Node): number {
  if (node.bodies) {
    const bodies = node.bodies.map((body) => body.nodes.reduce((sum, n) => sum + nodeFlops(body, n), 0));
    return typeof node.attrs.count === 'number' ? node.attrs.count * bodies[0]! : Math.max(0, ...bodies);
  }
  const out = node.outputs.reduce((sum, id) => sum + sizeOf(graphValue(graph, id).shape), 0);
  const kernel = node.kernel;
  if (kernel === 'BatchMatMul' || kernel === '_FusedMatMul' || kernel === 'MatMul' || kernel === POPTFJS_KERNELS.serializedMatMul) return matMulFlops(graph, node);
  if (kernel.includes('Conv2D') || kernel.includes('Conv3D') || kernel.includes('DepthwiseConv2d')) return convolutionFlops(graph, node);
  if (kernel.includes('Pool')) return poolingFlops(graph, node);
  // An add and a max per element (the sum and the relu are both outputs), or a step and a multiply.
  if (kernel === POPTFJS_KERNELS.addRelu) return out;
  if (kernel === POPTFJS_KERNELS.reluGrad) return 2 * out;
  if (DATA_MOVEMENT.has(kernel) || kernel.startsWith('poptfjs.')) return 0;
  if (REDUCTIONS.has(kernel)) return node.inputs.reduce((sum, id) => sum + sizeOf(graphValue(graph, id).shape), 0);
  if (kernel === 'Softmax' || kernel === 'LogSoftmax') return 5 * out;
  if (kernel === 'FusedBatchNorm' || kernel === 'LRN') return 8 * out;
  if (TRANSCENDENTAL.has(kernel)) return TRANSCENDENTAL_FLOPS * out;
  return out;
}

/** Bytes a value occupies on the device (float16 values take two bytes an element). */
export function valueBytes(graph: Graph, id: number): number {
  const v = graphValue(graph, id);
  return sizeOf(v.shape) * valueElementBytes(v);
}

/** True if the node computes in float16 (all its floating-point inputs are float16 values). */
export function computesInFloat16(graph: Graph, node: Node): boolean {
  const floats = node.inputs.map((id) => graphValue(graph, id)).filter((v) => v.dtype === 'float32' && sizeOf(v.shape) > 1);
  return floats.length > 0 && floats.every((v) => v.precision === 'float16');
}

/** The FLOPs and bytes of one node (nothing for views such as Reshape). */
export function nodeCost(graph: Graph, node: Node): NodeCost {
  if (isViewNode(graph, node)) return { flops: 0, bytes: 0 };
  const bytes = [...node.inputs, ...node.outputs].reduce((sum, id) => sum + valueBytes(graph, id), 0);
  return { flops: nodeFlops(graph, node), bytes };
}
