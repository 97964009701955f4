/**
 * The float16 values of an imported model: the IR values of its FLOAT16
 * tensors (graph inputs, initializers, node outputs) are flagged
 * `precision: 'float16'`, so the device computes them as it computes a
 * `half` model's: every node making one rounds its result to float16 (to
 * nearest even, or stochastically), float16 inputs are rounded on the way in
 * and float16 weights take two bytes.
 */
import type { Graph, ValueId } from '../ir/graph.js';
import type { TensorInfo } from './graph_evaluation.js';
import { OnnxElementType } from './proto/onnx_element_type.js';

/** `graph` with the values of the FLOAT16 tensors of `tensorInfo` (by the IR values `tensorValues` gives them) flagged float16. */
export function withFloat16Values(graph: Graph, tensorValues: ReadonlyMap<string, ValueId>, tensorInfo: ReadonlyMap<string, TensorInfo>): Graph {
  const half = new Set<ValueId>();
  for (const [name, id] of tensorValues) {
    if (tensorInfo.get(name)?.elementType === OnnxElementType.FLOAT16 && graph.values[id]!.dtype === 'float32') half.add(id);
  }
  if (half.size === 0) return graph;
  return { ...graph, values: graph.values.map((v) => (half.has(v.id) && v.precision !== 'float16' ? { ...v, precision: 'float16' } : v)) };
}
