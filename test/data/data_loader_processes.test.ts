import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { DataLoader, type DataLoaderDataset, type DataLoaderOptions } from '../../lib/data/data_loader.js';
import { Options } from '../../lib/options/index.js';

beforeAll(async () => {
  await tf.setBackend('cpu');
});

/** Options for process `id` of `count`, with 2 device iterations. */
function processOptions(id: number, count: number): Options {
  const opts = new Options({ fromEnvironment: false }).deviceIterations(2);
  opts.Distributed.configureProcessId(id, count);
  return opts;
}

/** The y values of each batch of one epoch of `loader`, disposing the batches. */
async function epoch(loader: DataLoader): Promise<number[][]> {
  const batches: number[][] = [];
  for await (const batch of loader) {
    batches.push(Array.from(batch[batch.length - 1]!.dataSync()));
    tf.dispose(batch);
  }
  return batches;
}

/** Each process's batches, process by process. */
async function perProcess(count: number, dataset: () => DataLoaderDataset, loaderOptions: DataLoaderOptions): Promise<number[][][]> {
  const out: number[][][] = [];
  for (let id = 0; id < count; id++) out.push(await epoch(new DataLoader(processOptions(id, count), dataset(), loaderOptions)));
  return out;
}

describe('DataLoader across processes (opts.Distributed)', () => {
  it('gives each process its share of every global batch: process p the p-th combinedBatchSize samples of it', async () => {
    const y = tf.range(0, 26, 1, 'float32');
    const shares = await perProcess(3, () => [y], { batchSize: 2 });
    // Global batches of 3 × 4 samples: 0-11 and 12-23; 24 and 25 are dropped.
    expect(shares).toEqual([
      [
        [0, 1, 2, 3],
        [12, 13, 14, 15],
      ],
      [
        [4, 5, 6, 7],
        [16, 17, 18, 19],
      ],
      [
        [8, 9, 10, 11],
        [20, 21, 22, 23],
      ],
    ]);
    expect(new DataLoader(processOptions(1, 3), [y], { batchSize: 2 }).length).toBe(2);
    tf.dispose(y);
  });

  it('shuffles every process into the same order (a shared seed), so the shares of a step are disjoint and make up the global batch', async () => {
    const y = tf.range(0, 24, 1, 'float32');
    const shares = await perProcess(2, () => [y], { batchSize: 3, shuffle: true, seed: 5 });
    const whole = await epoch(new DataLoader(new Options({ fromEnvironment: false }).deviceIterations(2), [y], { batchSize: 6, shuffle: true, seed: 5 }));
    expect(whole).toHaveLength(2);
    whole.forEach((global, step) => expect([...shares[0]![step]!, ...shares[1]![step]!]).toEqual(global));
    expect(new Set(shares.flat(2)).size).toBe(24);
    tf.dispose(y);
  });

  it('takes opts.randomSeed as the shared seed, and refuses to shuffle across processes without one', async () => {
    const y = tf.range(0, 16, 1, 'float32');
    const seeded = (id: number) => processOptions(id, 2).randomSeed(3);
    const a = await epoch(new DataLoader(seeded(0), [y], { batchSize: 2, shuffle: true }));
    const b = await epoch(new DataLoader(seeded(1), [y], { batchSize: 2, shuffle: true }));
    expect(new Set([...a.flat(), ...b.flat()]).size).toBe(16);
    expect(() => new DataLoader(processOptions(0, 2), [y], { shuffle: true })).toThrow(
      "DataLoader: shuffling across 2 processes needs a seed all of them share (the loader's seed, or opts.randomSeed), so that every process shuffles into the same order and takes its own share of it",
    );
    tf.dispose(y);
  });

  it('shares a final short global batch as evenly as it divides with dropLast: false', async () => {
    const y = tf.range(0, 13, 1, 'float32');
    const shares = await perProcess(3, () => [y], { batchSize: 1, dropLast: false });
    // One global batch of 3 × 2 = 6 samples twice, then 12 alone: process 0 takes it, the others have no third batch.
    expect(shares).toEqual([
      [[0, 1], [6, 7], [12]],
      [
        [2, 3],
        [8, 9],
      ],
      [
        [4, 5],
        [10, 11],
      ],
    ]);
    expect(new DataLoader(processOptions(0, 3), [y], { dropLast: false }).length).toBe(3);
    expect(new DataLoader(processOptions(2, 3), [y], { dropLast: false }).length).toBe(2);
    tf.dispose(y);
  });

  it("splits a tf.data.Dataset the same way, disposing the other processes' samples", async () => {
    const before = tf.memory().numTensors;
    const elements: tf.Tensor[][] = [];
    // tf.data.array hands out copies of its elements; the originals stay the test's.
    const dataset = () => tf.data.array([...Array(14).keys()].map((i) => elements[elements.push([tf.scalar(i)]) - 1]!));
    const shares = await perProcess(2, dataset, { batchSize: 2 });
    // One global batch of 2 × 4 elements; the 6 left over are dropped.
    expect(shares).toEqual([[[0, 1, 2, 3]], [[4, 5, 6, 7]]]);
    tf.dispose(elements);
    expect(tf.memory().numTensors).toBe(before);
  });

  it('refuses a dataset smaller than one global batch, saying so', () => {
    const y = tf.range(0, 10, 1, 'float32');
    expect(() => new DataLoader(processOptions(0, 3), [y], { batchSize: 2 })).toThrow(
      'DataLoader: the dataset has 10 samples, fewer than one combined batch of 4 (batchSize 2 × deviceIterations 2 × (replicationFactor 1 / input group size 1) × gradientAccumulation 1) for each of 3 processes; use a smaller batchSize or dropLast: false',
    );
    tf.dispose(y);
  });
});
