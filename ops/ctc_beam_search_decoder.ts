/**
 * `ctcBeamSearchDecoder`: PopTorch's `ctc_beam_search_decoder`, decoding the
 * output of a CTC-trained model with a prefix beam search.
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../lib/common/errors.js';
import { POPTFJS_KERNELS } from '../lib/backend/kernel_catalogue/kernel_catalogue.js';
import type { CtcBeamSearchAttrs } from '../lib/backend/poptfjs_kernels/ctc_beam_search_kernel.js';
import { SHAPE_ONLY_BACKEND } from '../lib/backend/shape_only/backend_registration.js';
import { declaredTensorMemory } from '../lib/host_memory/declared_tensor_memory.js';
import { formatBytes } from '../lib/ipu/byte_size.js';
import { BOW, GC200, ipuMemory } from '../lib/ipu/target_spec.js';
import { isRunningOnIpu } from '../lib/trace/running_on_ipu.js';

function invalid(message: string): PoptfjsError {
  return new PoptfjsError(`ctcBeamSearchDecoder: ${message}`, { type: 'trace', location: 'ctcBeamSearchDecoder' });
}

/**
 * Refuses a decoder whose memory (the outputs, and the candidates and beam
 * histories of its search, as the cost model counts them) is more than
 * `limit` bytes, before any of it is allocated: in a model, the In-Processor
 * memory of an IPU, where it runs; outside one, what tensors may take on the
 * host.
 */
function checkMemory(steps: number, batch: number, classes: number, beamWidth: number, topPaths: number): void {
  if (tf.getBackend() === SHAPE_ONLY_BACKEND) return; // Planned with shapes only, nothing is allocated: the plan shows whether it fits.
  const outputs = batch * topPaths * (steps + 2) * 4;
  const search = batch * beamWidth * (2 * classes + steps) * 4;
  const onIpu = isRunningOnIpu();
  const limit = onIpu ? Math.max(...[GC200, BOW].map(ipuMemory)) : declaredTensorMemory().bytes;
  if (outputs + search <= limit) return;
  const where = onIpu ? `the ${formatBytes(limit)} of In-Processor memory of an IPU (GC200, Bow), on which the decoder runs` : declaredTensorMemory().description;
  throw invalid(
    `beamWidth ${beamWidth} and topPaths ${topPaths} need ${formatBytes(outputs + search)}: outputs of batch ${batch} × topPaths ${topPaths} × (input length ${steps} + 2) × 4 B = ${formatBytes(outputs)}, ` +
      `candidates and histories of batch ${batch} × beamWidth ${beamWidth} × (2 × classes ${classes} + input length ${steps}) × 4 B = ${formatBytes(search)}; more than ${where}`,
  );
}

function checkCount(value: number, name: string, min: number, max: number): void {
  if (!Number.isInteger(value) || value < min || value > max) throw invalid(`${name} must be an integer in [${min}, ${max}], got ${String(value)}`);
}

/**
 * The `topPaths` most probable label sequences of each batch entry, found by
 * a CTC prefix beam search of width `beamWidth`, as PopTorch's
 * `poptorch.ctc_beam_search_decoder(probs, lengths, blank, beam_width, top_paths)`:
 * `probs` are log-probabilities of shape
 * [input length T, batch size N, classes C], `lengths` (int32 [N]) how many
 * time steps of each entry to decode, `blank` the blank class. Returns three
 * tensors, in PopTorch's order: the log-probability of each path
 * (float32 [N, topPaths]), each path's length (int32 [N, topPaths]) and the
 * paths (int32 [N, topPaths, T], zeros after each path's length); an entry
 * with fewer distinct paths than `topPaths` gives the rest -Infinity and
 * length 0. The decoder has no gradient.
 *
 * In a model it is one node, `poptfjs.CtcBeamSearchDecoder`. Its cost on the
 * simulated IPU: each of the T time steps extends every beam of every entry
 * by every class (an element-wise pass over N·beamWidth·C candidates, spread
 * over the tiles, 3 cycles each) and keeps the best beamWidth of each entry
 * (a reduction of the candidates to N·beamWidth); its temporary memory holds
 * the candidates (two float32 log-probabilities each) and the beams'
 * histories (N·beamWidth·T int32). A decoder whose outputs and temporary
 * memory are more than an IPU's memory (in a model) or than tensors may take
 * on the host (outside one) is refused with the figures before anything is
 * allocated.
 */
export function ctcBeamSearchDecoder(probs: tf.Tensor, lengths: tf.Tensor, blank = 0, beamWidth = 100, topPaths = 1): [tf.Tensor2D, tf.Tensor2D, tf.Tensor3D] {
  if (!(probs instanceof tf.Tensor)) throw invalid(`probs must be a tf.Tensor, got ${probs === null ? 'null' : typeof probs}`);
  if (!(lengths instanceof tf.Tensor)) throw invalid(`lengths must be a tf.Tensor, got ${lengths === null ? 'null' : typeof lengths}`);
  if (probs.rank !== 3 || probs.dtype !== 'float32')
    throw invalid(`probs must be float32 log-probabilities of shape [input length, batch size, classes], got ${probs.dtype}[${probs.shape.join(',')}]`);
  const [, batch, classes] = probs.shape as [number, number, number];
  if (lengths.rank !== 1 || lengths.shape[0] !== batch || lengths.dtype !== 'int32')
    throw invalid(`lengths must be int32 of shape [${batch}] (one per batch entry), got ${lengths.dtype}[${lengths.shape.join(',')}]`);
  checkCount(blank, 'blank', 0, classes - 1);
  checkCount(beamWidth, 'beamWidth', 1, Number.MAX_SAFE_INTEGER);
  checkCount(topPaths, 'topPaths', 1, beamWidth);
  checkMemory(probs.shape[0]!, batch, classes, beamWidth, topPaths);
  const attrs: CtcBeamSearchAttrs = { blank, beamWidth, topPaths };
  return tf.engine().runKernel(POPTFJS_KERNELS.ctcBeamSearchDecoder, { probs, lengths }, attrs as unknown as tf.NamedAttrMap) as unknown as [
    tf.Tensor2D,
    tf.Tensor2D,
    tf.Tensor3D,
  ];
}
