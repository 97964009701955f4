/**
 * The trace of Poplar's `debug.trace`: the state of every edge before and
 * after each compute set runs. Here a compute set is a unit of the schedule
 * (a stage's forward or backward pass) on one micro-batch and replica, and its
 * edges are the values its kernels read and make: a line names the compute
 * set, then each kernel gives the values it read (`before`) and made
 * (`after`), each as `%<value> <dtype>[<shape>]: <values>`, laid out as
 * `ops.ipuPrintTensor` lays out tensors, every element with all the digits
 * its float32 needs (tensors of more than 1000 elements summarised).
 */
import type * as tf from '@tensorflow/tfjs';
import type { Graph, Node } from '../ir/graph.js';
import type { Executable } from '../executable/executable.js';
import { DEFAULT_TENSOR_TEXT_FORMAT, tensorText, type PrintedDtype, type TensorTextFormat } from './tensor_text.js';

/** How the trace writes a value: exactly (every digit of a float32). */
const TRACE_FORMAT: TensorTextFormat = { ...DEFAULT_TENSOR_TEXT_FORMAT, digits: 0 };

/** The line that opens the trace of a compute set: unit `unit` on `microBatch` and `replica`. */
export function computeSetTrace(executable: Executable, unit: number, microBatch: number, replica: number): string {
  const { units, stages } = executable.placement;
  const u = units[unit]!;
  const name = u.stages.map((stage) => `${u.pass === 'forward' ? 'F' : 'B'}${stage}:${microBatch}`).join(' ');
  const ipus = [...new Set(u.stages.map((stage) => stages[stage]!.ipu))].join(', ');
  return `compute set ${name} (IPU ${ipus}, replica ${replica})`;
}

/** An edge as the trace shows it. */
function edge(when: 'before' | 'after', id: number, t: tf.Tensor): string {
  const text = tensorText(t.dataSync() as ArrayLike<number>, t.shape, t.dtype as PrintedDtype, TRACE_FORMAT, 0);
  return `    ${when} %${id} ${t.dtype}[${t.shape.join(',')}]: ${text.replaceAll('\n', '\n      ')}`;
}

/** The interpreter's `afterKernel` of a traced graph: each kernel's lines go to `trace`. */
export function kernelTrace(graph: Graph, trace: (line: string) => void): (node: Node, inputs: readonly tf.Tensor[], outputs: readonly tf.Tensor[]) => void {
  return (node, inputs, outputs) => {
    const layer = graph.nodes[node.id]?.annotations.layer;
    trace(`  #${node.id} ${node.kernel}${layer ? ` (${layer})` : ''}`);
    inputs.forEach((t, i) => trace(edge('before', node.inputs[i]!, t)));
    outputs.forEach((t, i) => trace(edge('after', node.outputs[i]!, t)));
  };
}
