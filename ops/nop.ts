/**
 * `nop`: PopTorch's `nop`, an identity kept in the graph, for debugging.
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../lib/common/errors.js';
import { POPTFJS_KERNELS } from '../lib/backend/kernel_catalogue/kernel_catalogue.js';

/**
 * Returns `x` unchanged, through a node of its own, `poptfjs.Nop`, that no
 * pattern removes (unlike an `Identity`, which `NoOpRemoval` takes out): on
 * the simulated IPU it is a copy of `x`, with the copy's memory and time, as
 * PopART's `Nop` is. Its gradient passes through unchanged. Like any node, it
 * is removed with the rest of the graph when nothing uses its output.
 */
export function nop(x: tf.Tensor): tf.Tensor {
  if (!(x instanceof tf.Tensor)) {
    throw new PoptfjsError(`nop: expected a tf.Tensor, got ${x === null ? 'null' : typeof x}`, { type: 'trace', location: 'nop' });
  }
  return tf.engine().runKernel(POPTFJS_KERNELS.nop, { x }) as tf.Tensor;
}
