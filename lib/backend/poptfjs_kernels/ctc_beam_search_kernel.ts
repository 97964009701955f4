/**
 * The kernel of `ops.ctcBeamSearchDecoder`: PopTorch's (PopART's)
 * `CtcBeamSearchDecoder`, a prefix beam search over CTC log-probabilities.
 *
 * Inputs `probs` (log-probabilities, float32 [T, N, C]) and `lengths`
 * (int32 [N]); attributes `blank`, `beamWidth`, `topPaths`. Outputs, as
 * PopTorch returns them: the log-probability of each of the `topPaths` best
 * label sequences (float32 [N, topPaths]), their lengths (int32
 * [N, topPaths]) and the sequences (int32 [N, topPaths, T], zeros after each
 * sequence's length). A batch entry with fewer distinct sequences than
 * `topPaths` gives the rest a log-probability of -Infinity and length 0.
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../../common/errors.js';
import type { HostKernel } from './backend_kernel.js';

/** The kernel name of `ops.ctcBeamSearchDecoder`. */
export const CTC_BEAM_SEARCH_DECODER = 'poptfjs.CtcBeamSearchDecoder';

/** The attributes of a CTC beam search decoder node. */
export interface CtcBeamSearchAttrs {
  readonly blank: number;
  readonly beamWidth: number;
  readonly topPaths: number;
}

/** A label sequence in the beam: the log-probabilities of its alignments ending in a blank and in a label. */
interface Beam {
  readonly labels: number[];
  blank: number;
  label: number;
}

function logAdd(a: number, b: number): number {
  if (a === -Infinity) return b;
  if (b === -Infinity) return a;
  const m = Math.max(a, b);
  return m + Math.log(Math.exp(a - m) + Math.exp(b - m));
}

function total(beam: Beam): number {
  return logAdd(beam.blank, beam.label);
}

/**
 * The `beamWidth` most probable label sequences of one batch entry, best
 * first: at each time step every sequence of the beam is extended by every
 * class (a blank or a repeated label keeps the sequence; CTC merges repeats
 * unless a blank separates them), the alignments of equal sequences are
 * summed, and the `beamWidth` sequences of highest probability are kept.
 */
function ctcPrefixBeamSearch(logProb: (t: number, c: number) => number, steps: number, classes: number, attrs: CtcBeamSearchAttrs): Beam[] {
  let beams: Beam[] = [{ labels: [], blank: 0, label: -Infinity }];
  for (let t = 0; t < steps; t++) {
    const next = new Map<string, Beam>();
    const entry = (labels: number[]): Beam => {
      const key = labels.join(',');
      let beam = next.get(key);
      if (!beam) next.set(key, (beam = { labels, blank: -Infinity, label: -Infinity }));
      return beam;
    };
    for (const beam of beams) {
      const last = beam.labels[beam.labels.length - 1];
      const p = total(beam);
      for (let c = 0; c < classes; c++) {
        const lp = logProb(t, c);
        if (c === attrs.blank) {
          const same = entry(beam.labels);
          same.blank = logAdd(same.blank, p + lp);
        } else if (c === last) {
          // A repeat merges with the label before it, unless a blank came between.
          const same = entry(beam.labels);
          same.label = logAdd(same.label, beam.label + lp);
          const extended = entry([...beam.labels, c]);
          extended.label = logAdd(extended.label, beam.blank + lp);
        } else {
          const extended = entry([...beam.labels, c]);
          extended.label = logAdd(extended.label, p + lp);
        }
      }
    }
    beams = [...next.values()].sort((a, b) => total(b) - total(a)).slice(0, attrs.beamWidth);
  }
  return beams;
}

function decoderKernel(): tf.KernelFunc {
  return ({ inputs, attrs, backend }) => {
    const a = attrs as unknown as CtcBeamSearchAttrs;
    const device = backend as tf.KernelBackend;
    const probsInfo = inputs.probs!;
    const lengthsInfo = inputs.lengths!;
    const [T, N, C] = probsInfo.shape as [number, number, number];
    const probs = device.readSync(probsInfo.dataId) as Float32Array;
    const lengths = device.readSync(lengthsInfo.dataId) as Int32Array;
    const K = a.topPaths;
    const pathProbs = new Float32Array(N * K).fill(-Infinity);
    const pathLengths = new Int32Array(N * K);
    const paths = new Int32Array(N * K * T);
    for (let n = 0; n < N; n++) {
      const length = lengths[n]!;
      if (!(length >= 0 && length <= T)) {
        throw new PoptfjsError(`ctcBeamSearchDecoder: length ${length} of batch entry ${n} is outside [0, ${T}] (the input length)`, {
          type: 'runtime',
          location: 'ctcBeamSearchDecoder',
        });
      }
      const beams = ctcPrefixBeamSearch((t, c) => probs[(t * N + n) * C + c]!, length, C, a);
      beams.slice(0, K).forEach((beam, k) => {
        pathProbs[n * K + k] = total(beam);
        pathLengths[n * K + k] = beam.labels.length;
        paths.set(beam.labels, (n * K + k) * T);
      });
    }
    return [tf.tensor2d(pathProbs, [N, K]), tf.tensor2d(pathLengths, [N, K], 'int32'), tf.tensor3d(paths, [N, K, T], 'int32')];
  };
}

/** `ops.ctcBeamSearchDecoder`: a CTC prefix beam search over `probs` (log-probabilities [T, N, C]) and `lengths`; no gradient (its outputs are a search's results). */
export const CTC_BEAM_SEARCH_DECODER_KERNEL: HostKernel = { kernelName: CTC_BEAM_SEARCH_DECODER, kernelFunc: decoderKernel };
