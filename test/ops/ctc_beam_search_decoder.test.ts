/**
 * `ops.ctcBeamSearchDecoder`: a CTC prefix beam search, against references
 * written here: the exact sum over every alignment (which a beam wide enough
 * to hold every prefix must equal), and a plain prefix beam search in linear
 * probabilities.
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { inferenceModel, ops, plan } from 'poptfjs';
import { kernelCost } from '../../lib/ipu/kernel_cycles.js';
import { smallIpuTarget } from '../helpers.js';

interface Decoded {
  labels: number[];
  logProb: number;
}

/** The probability of every label sequence of entry `n`: the sum over all C^T alignments that collapse to it. */
function exactDecoding(probs: number[][][], n: number, steps: number, blank: number): Decoded[] {
  const classes = probs[0]![0]!.length;
  const sums = new Map<string, { labels: number[]; p: number }>();
  const alignment = new Array<number>(steps).fill(0);
  for (let i = 0; i < classes ** steps; i++) {
    let rest = i;
    let p = 1;
    for (let t = 0; t < steps; t++) {
      alignment[t] = rest % classes;
      rest = Math.floor(rest / classes);
      p *= Math.exp(probs[t]![n]![alignment[t]!]!);
    }
    const labels = alignment.filter((c, t) => c !== blank && (t === 0 || c !== alignment[t - 1]));
    const key = labels.join(',');
    const entry = sums.get(key) ?? { labels, p: 0 };
    entry.p += p;
    sums.set(key, entry);
  }
  return [...sums.values()].sort((a, b) => b.p - a.p).map((e) => ({ labels: e.labels, logProb: Math.log(e.p) }));
}

/** A plain prefix beam search in linear probabilities (p_b, p_nb per prefix), keeping `width` prefixes a step. */
function prefixBeamSearch(probs: number[][][], n: number, steps: number, blank: number, width: number): Decoded[] {
  let beams = new Map<string, [number, number]>([['', [1, 0]]]);
  for (let t = 0; t < steps; t++) {
    const next = new Map<string, [number, number]>();
    const at = (key: string) => next.get(key) ?? (next.set(key, [0, 0]), next.get(key)!);
    for (const [key, [pb, pnb]] of beams) {
      const labels = key === '' ? [] : key.split(',').map(Number);
      probs[t]![n]!.forEach((lp, c) => {
        const p = Math.exp(lp);
        if (c === blank) {
          at(key)[0] += (pb + pnb) * p;
          return;
        }
        const longer = [...labels, c].join(',');
        if (c === labels[labels.length - 1]) {
          at(key)[1] += pnb * p;
          at(longer)[1] += pb * p;
        } else {
          at(longer)[1] += (pb + pnb) * p;
        }
      });
    }
    beams = new Map([...next].sort((a, b) => b[1][0] + b[1][1] - (a[1][0] + a[1][1])).slice(0, width));
  }
  return [...beams].map(([key, [pb, pnb]]) => ({ labels: key === '' ? [] : key.split(',').map(Number), logProb: Math.log(pb + pnb) }));
}

/** Log-softmax of random logits, [T, N, C], as nested arrays. */
function randomLogProbs(steps: number, batch: number, classes: number, seed: number): number[][][] {
  return tf.tidy(() => tf.logSoftmax(tf.mul(tf.randomNormal([steps, batch, classes], 0, 1, 'float32', seed), 2)).arraySync() as number[][][]);
}

function expectDecoded(outputs: tf.Tensor[], expected: Decoded[][], steps: number): void {
  const [probs, lengths, paths] = outputs.map((t) => t.arraySync()) as [number[][], number[][], number[][][]];
  expected.forEach((entry, n) => {
    entry.forEach((path, k) => {
      expect(probs[n]![k]).toBeCloseTo(path.logProb, 4);
      expect(lengths[n]![k]).toBe(path.labels.length);
      expect(paths[n]![k]).toEqual([...path.labels, ...new Array<number>(steps - path.labels.length).fill(0)]);
    });
  });
}

describe('ops.ctcBeamSearchDecoder', () => {
  it('with a beam holding every prefix, finds the exact most probable label sequences and their log-probabilities', async () => {
    const probs = randomLogProbs(4, 2, 3, 7);
    const lengths = [4, 3];
    const expected = [0, 1].map((n) => exactDecoding(probs, n, lengths[n]!, 0).slice(0, 3));
    const executor = inferenceModel((p: tf.Tensor, l: tf.Tensor) => ops.ctcBeamSearchDecoder(p, l, 0, 100, 3));
    const outputs = (await executor.run(tf.tensor3d(probs), tf.tensor1d(lengths, 'int32'))) as tf.Tensor[];
    expect(outputs.map((t) => [t.dtype, t.shape])).toEqual([
      ['float32', [2, 3]],
      ['int32', [2, 3]],
      ['int32', [2, 3, 4]],
    ]);
    expectDecoded(outputs, expected, 4);
    expect(executor.executable.graph.nodes.map((n) => n.kernel)).toEqual(['poptfjs.CtcBeamSearchDecoder']);
  });

  it('with a narrow beam, keeps what a plain prefix beam search keeps, with another blank class', () => {
    const probs = randomLogProbs(9, 3, 5, 11);
    const lengths = [9, 6, 7];
    const outputs = ops.ctcBeamSearchDecoder(tf.tensor3d(probs), tf.tensor1d(lengths, 'int32'), 2, 3, 2);
    const expected = lengths.map((length, n) => prefixBeamSearch(probs, n, length, 2, 3).slice(0, 2));
    expectDecoded(outputs, expected, 9);
  });

  it("returns PopTorch's shapes with its defaults, and -Infinity for paths an entry does not have", () => {
    // PopTorch's test: 9 steps, batch 3, 10 classes, one path of a beam of 100.
    const [probs, lengths, paths] = ops.ctcBeamSearchDecoder(tf.tensor3d(randomLogProbs(9, 3, 10, 42)), tf.tensor1d([5, 8, 6], 'int32'));
    expect([probs.shape, lengths.shape, paths.shape]).toEqual([
      [3, 1],
      [3, 1],
      [3, 1, 9],
    ]);
    // An entry of length 0 decodes to the empty sequence, of probability 1, and nothing else.
    const [p0, l0] = ops.ctcBeamSearchDecoder(tf.tensor3d(randomLogProbs(2, 1, 3, 1)), tf.tensor1d([0], 'int32'), 0, 4, 2);
    expect(p0.arraySync()).toEqual([[0, -Infinity]]);
    expect(l0.arraySync()).toEqual([[0, 0]]);
  });

  it('costs, per time step, a pass over the candidates and a reduction to the beams, with their memory as temporary', async () => {
    const executor = inferenceModel((p: tf.Tensor, l: tf.Tensor) => ops.ctcBeamSearchDecoder(p, l, 0, 4, 2));
    await executor.compile(tf.zeros([10, 2, 8]), tf.zeros([2], 'int32'));
    const graph = executor.executable.graph;
    const node = graph.nodes[0]!;
    const target = smallIpuTarget({ tiles: 16, hostBytesPerCycle: 2 });
    // 2 entries × 4 beams × 8 classes = 64 candidates, 4 a tile: 170 + 4 × 3 cycles, one sync. Reduced to 8 beams: 8 candidates
    // each, spread over 8 tiles (170 + 4 × 0.5), partial sums 8 × 8 = 64, 4 a tile of 4 bytes exchanged at 4 bytes a cycle,
    // added (170 + 4 × 0.5), two syncs. Ten steps.
    const step = { compute: 170 + 4 * 3 + (170 + 4 * 0.5) + (170 + 4 * 0.5), exchange: (4 * 4) / 4, sync: 3 * 90 };
    expect(kernelCost(graph, node, target)).toEqual({
      compute: 10 * step.compute,
      exchange: 10 * step.exchange,
      sync: 10 * step.sync,
      // Two float32 log-probabilities per candidate, and 8 beams' histories of 10 labels.
      temporaryBytes: 64 * 2 * 4 + 8 * 10 * 4,
    });
  });

  it('refuses at compile, before allocating, a beam or topPaths whose memory is more than an IPU holds, with the figures', async () => {
    const probs = tf.zeros([5, 2, 4]);
    const lengths = tf.tensor1d([5, 5], 'int32');
    // Outputs: 2 × 1e9 × (5 + 2) × 4 B = 56e9 B (52.2 GiB); search: 2 × 1e9 × (2 × 4 + 5) × 4 B = 104e9 B (96.9 GiB); 160e9 B = 149.0 GiB.
    const decoder = (beam: number, top: number) => inferenceModel((p: tf.Tensor, l: tf.Tensor) => ops.ctcBeamSearchDecoder(p, l, 0, beam, top));
    await expect(decoder(1e9, 1e9).compile(probs, lengths)).rejects.toThrow(
      'ctcBeamSearchDecoder: beamWidth 1000000000 and topPaths 1000000000 need 149.0 GiB: outputs of batch 2 × topPaths 1000000000 × (input length 5 + 2) × 4 B = 52.2 GiB, ' +
        'candidates and histories of batch 2 × beamWidth 1000000000 × (2 × classes 4 + input length 5) × 4 B = 96.9 GiB; ' +
        'more than the 897.0 MiB of In-Processor memory of an IPU (GC200, Bow), on which the decoder runs',
    );
    await expect(decoder(1e9, 1).compile(probs, lengths)).rejects.toThrow('ctcBeamSearchDecoder: beamWidth 1000000000 and topPaths 1 need 96.9 GiB');
    // Outside a model, the bound is what tensors may take on the host.
    expect(() => ops.ctcBeamSearchDecoder(probs, lengths, 0, 1e9, 1e9)).toThrow(
      /^ctcBeamSearchDecoder: beamWidth 1000000000 and topPaths 1000000000 need 149\.0 GiB: .*; more than /,
    );
    // Planned with shapes only, nothing is allocated: the plan says it does not fit.
    const planned = await plan(() => (p: tf.Tensor, l: tf.Tensor) => ops.ctcBeamSearchDecoder(p, l, 0, 1e9, 1), {
      inputs: [{ shape: [5, 2, 4] }, { shape: [2], dtype: 'int32' }],
    });
    expect(planned.fits).toBe(false);
  });

  it('refuses inputs it cannot decode, saying what is expected', () => {
    const probs = tf.zeros([4, 2, 3]);
    const lengths = tf.tensor1d([4, 4], 'int32');
    expect(() => ops.ctcBeamSearchDecoder(tf.zeros([4, 3]), lengths)).toThrow(
      'ctcBeamSearchDecoder: probs must be float32 log-probabilities of shape [input length, batch size, classes], got float32[4,3]',
    );
    expect(() => ops.ctcBeamSearchDecoder(probs, tf.tensor1d([4, 4]))).toThrow(
      'ctcBeamSearchDecoder: lengths must be int32 of shape [2] (one per batch entry), got float32[2]',
    );
    expect(() => ops.ctcBeamSearchDecoder(probs, lengths, 3)).toThrow('ctcBeamSearchDecoder: blank must be an integer in [0, 2], got 3');
    expect(() => ops.ctcBeamSearchDecoder(probs, lengths, 0, 2, 3)).toThrow('ctcBeamSearchDecoder: topPaths must be an integer in [1, 2], got 3');
    expect(() => ops.ctcBeamSearchDecoder(probs, tf.tensor1d([4, 5], 'int32'))).toThrow(
      'ctcBeamSearchDecoder: length 5 of batch entry 1 is outside [0, 4] (the input length)',
    );
  });
});
