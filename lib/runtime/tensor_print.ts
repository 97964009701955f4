/**
 * What the device does when it runs a `poptfjs.IpuPrintTensor` node
 * (`ops.ipuPrintTensor`): it copies the tensor to the host and prints it with
 * its title, through the `op` logger ({@link Logger.print}: shown at every log
 * level but OFF), each time the node runs, so once per micro-batch.
 */
import type * as tf from '@tensorflow/tfjs';
import type { Node } from '../ir/graph.js';
import { getLogger } from '../common/log.js';
import { DEFAULT_TENSOR_TEXT_FORMAT, printedTensorText, type PrintedDtype, type TensorTextFormat } from './tensor_text.js';

const log = getLogger('op');

/** The text format of a print node, from its attributes (PopTorch's defaults for any missing). */
export function printFormatOf(node: Node): TensorTextFormat {
  const a = node.attrs;
  const pick = <K extends keyof TensorTextFormat>(key: K): TensorTextFormat[K] => (a[key] ?? DEFAULT_TENSOR_TEXT_FORMAT[key]) as TensorTextFormat[K];
  return {
    summariseThreshold: pick('summariseThreshold'),
    edgeItems: pick('edgeItems'),
    maxLineWidth: pick('maxLineWidth'),
    digits: pick('digits'),
    floatFormat: pick('floatFormat'),
    separator: pick('separator'),
    openBracket: pick('openBracket'),
    closeBracket: pick('closeBracket'),
  };
}

/** The text a print node prints for the value `t`. */
export function printNodeText(node: Node, t: tf.Tensor): string {
  const title = typeof node.attrs.title === 'string' ? node.attrs.title : '';
  return printedTensorText(title, t.dataSync() as ArrayLike<number>, t.shape, t.dtype as PrintedDtype, printFormatOf(node));
}

/** Prints `t`, the value of print node `node`, through the `op` logger. */
export function printNodeValue(node: Node, t: tf.Tensor): void {
  log.print(() => printNodeText(node, t));
}
