/**
 * A node of a graph as the kernel catalogue's rules see it
 * ({@link KernelNode}): its kernel, attributes, and the shapes, dtypes,
 * elements and device bytes (two an element for float16 values) of its
 * inputs and outputs.
 */
import type { KernelNode, KernelTensor } from '../backend/kernel_catalogue/kernel_record.js';
import { sizeOf, valueElementBytes, type Graph, type Node, type ValueId } from './graph.js';

function tensorOf(graph: Graph, id: ValueId): KernelTensor {
  const value = graph.values[id]!;
  const elements = sizeOf(value.shape);
  return { shape: value.shape, dtype: value.dtype, elements, bytes: elements * valueElementBytes(value) };
}

/** `node` of `graph` as a kernel call; `bodyFlops` counts the FLOPs of each of its bodies, when it has any. */
export function kernelNode(graph: Graph, node: Node, bodyFlops: () => readonly number[] = () => []): KernelNode {
  const inputs = node.inputs.map((id) => tensorOf(graph, id));
  return {
    kernel: node.kernel,
    attrs: node.attrs,
    inputs,
    outputs: node.outputs.map((id) => tensorOf(graph, id)),
    input(name, fallback) {
      const index = node.inputNames ? node.inputNames.indexOf(name) : -1;
      return inputs[index >= 0 ? index : fallback]!;
    },
    hasInput: (name) => node.inputNames?.includes(name) ?? false,
    bodyFlops,
  };
}
