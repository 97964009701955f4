/**
 * The DataLoader across processes (`opts.Distributed`), as PopTorch's
 * DataLoader splits a dataset with its `_SubDataset`: each process reads one
 * consecutive block of the samples. Written from PopTorch's
 * tests/dataloader_test.py: `_run_subdataset_test` (test_subdataset,
 * test_subdataset2), `_run_shuffle_subdataset_test` (test_shuffle_subdataset)
 * and test_global_shuffle_each_epoch.
 */
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { DataLoader, type DataLoaderOptions } from '../../lib/data/data_loader.js';
import { Options } from '../../lib/options/index.js';

beforeAll(async () => {
  await tf.setBackend('cpu');
});

type Dataset = readonly tf.Tensor[] | tf.data.Dataset<tf.Tensor | tf.Tensor[]>;

/** Options for process `id` of `count`, with `deviceIterations` device iterations. */
function processOptions(id: number, count: number, deviceIterations = 1): Options {
  const opts = new Options({ fromEnvironment: false }).deviceIterations(deviceIterations);
  opts.Distributed.configureProcessId(id, count);
  return opts;
}

/** The values of the last component of each batch of one epoch of `loader`, disposing the batches. */
async function epoch(loader: DataLoader): Promise<number[][]> {
  const batches: number[][] = [];
  for await (const batch of loader) {
    batches.push(Array.from(batch[batch.length - 1]!.dataSync()));
    tf.dispose(batch);
  }
  return batches;
}

/** Each process's batches, process by process. */
async function perProcess(count: number, dataset: () => Dataset, loaderOptions: DataLoaderOptions, deviceIterations = 1): Promise<number[][][]> {
  const out: number[][][] = [];
  for (let id = 0; id < count; id++) out.push(await epoch(new DataLoader(processOptions(id, count, deviceIterations), dataset(), loaderOptions)));
  return out;
}

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

describe('DataLoader across processes (opts.Distributed)', () => {
  it('gives each process the next consecutive block of whole combined batches (test_subdataset)', async () => {
    // 100 samples, batch 4, 3 processes: 4 × ⌊100 / 12⌋ = 32 samples each; 96-99 are not read.
    const y = tf.range(0, 100, 1, 'float32');
    const shares = await perProcess(3, () => [y], { batchSize: 4 });
    shares.forEach((batches, p) => {
      expect(batches).toHaveLength(8);
      expect(batches.flat()).toEqual(range(32 * p, 32 * (p + 1)));
      expect(batches[0]).toEqual(range(32 * p, 32 * p + 4));
    });
    // len(loader) == num_tensors // (combined_batch_size * num_hosts)
    expect(new DataLoader(processOptions(2, 3), [y], { batchSize: 4 }).length).toBe(8);
    tf.dispose(y);
  });

  it('takes the device iterations into the block (test_subdataset2: batch 2, 2 processes, combined batches of 4)', async () => {
    const y = tf.range(0, 26, 1, 'float32');
    const shares = await perProcess(2, () => [y], { batchSize: 2 }, 2);
    // 4 × ⌊26 / 8⌋ = 12 samples each.
    expect(shares).toEqual([
      [range(0, 4), range(4, 8), range(8, 12)],
      [range(12, 16), range(16, 20), range(20, 24)],
    ]);
    tf.dispose(y);
  });

  it('shuffles all the samples into one order every process shares, each taking its block of it (test_shuffle_subdataset)', async () => {
    const y = tf.range(0, 100, 1, 'float32');
    const shares = await perProcess(3, () => [y], { batchSize: 4, shuffle: true, seed: 42 });
    const whole = (await epoch(new DataLoader(new Options({ fromEnvironment: false }), [y], { batchSize: 96, shuffle: true, seed: 42 })))[0]!;
    expect(shares.map((batches) => batches.flat())).toEqual([whole.slice(0, 32), whole.slice(32, 64), whole.slice(64, 96)]);
    expect(new Set(shares.flat(2)).size).toBe(96);
    tf.dispose(y);
  });

  it('shuffles into a new order each epoch in every process (test_global_shuffle_each_epoch)', async () => {
    const y = tf.range(0, 100, 1, 'float32');
    for (const count of [2, 3, 4, 5]) {
      for (let id = 0; id < count; id++) {
        const loader = new DataLoader(processOptions(id, count).randomSeed(0), [y], { batchSize: 16, shuffle: true });
        const epochs: string[] = [];
        for (let e = 0; e < 5; e++) epochs.push(JSON.stringify((await epoch(loader)).flat().sort((a, b) => a - b)));
        expect(new Set(epochs).size).toBe(5);
      }
    }
    tf.dispose(y);
  });

  it('takes opts.randomSeed as the shared seed, and refuses to shuffle across processes without one', async () => {
    const y = tf.range(0, 16, 1, 'float32');
    const seeded = (id: number) => processOptions(id, 2).randomSeed(3);
    const a = await epoch(new DataLoader(seeded(0), [y], { batchSize: 2, shuffle: true }));
    const b = await epoch(new DataLoader(seeded(1), [y], { batchSize: 2, shuffle: true }));
    expect(new Set([...a.flat(), ...b.flat()]).size).toBe(16);
    expect(() => new DataLoader(processOptions(0, 2), [y], { shuffle: true })).toThrow(
      "DataLoader: shuffling across 2 processes needs a seed all of them share (the loader's seed, or opts.randomSeed), so that every process shuffles into the same order and takes its own block of it",
    );
    tf.dispose(y);
  });

  it('with dropLast: false shares the samples as evenly as they divide, each process ending on a short batch', async () => {
    // 13 samples over 3 processes: 5, 4 and 4, read in batches of 2.
    const y = tf.range(0, 13, 1, 'float32');
    const shares = await perProcess(3, () => [y], { batchSize: 2, dropLast: false });
    expect(shares).toEqual([
      [[0, 1], [2, 3], [4]],
      [range(5, 7), range(7, 9)],
      [range(9, 11), range(11, 13)],
    ]);
    expect(new DataLoader(processOptions(0, 3), [y], { batchSize: 2, dropLast: false }).length).toBe(3);
    expect(new DataLoader(processOptions(2, 3), [y], { batchSize: 2, dropLast: false }).length).toBe(2);
    tf.dispose(y);
  });

  it('splits a tf.data.Dataset of known size the same way, disposing the samples before its block', async () => {
    const before = tf.memory().numTensors;
    const elements: tf.Tensor[][] = [];
    // tf.data.array hands out copies of its elements; the originals stay the test's.
    const dataset = () => tf.data.array([...Array(14).keys()].map((i) => elements[elements.push([tf.scalar(i)]) - 1]!));
    const shares = await perProcess(2, dataset, { batchSize: 2 }, 2);
    // 4 × ⌊14 / 8⌋ = 4 samples each: 0-3 and 4-7.
    expect(shares).toEqual([[[0, 1, 2, 3]], [[4, 5, 6, 7]]]);
    tf.dispose(elements);
    expect(tf.memory().numTensors).toBe(before);
  });

  it('refuses to split a tf.data.Dataset of unknown size, as PopTorch refuses an IterableDataset; autoDistributedPartitioning: false reads it whole', async () => {
    const generated = () =>
      tf.data.generator(function* () {
        for (let i = 0; i < 6; i++) yield tf.scalar(i);
      });
    expect(() => new DataLoader(processOptions(1, 2), generated(), { batchSize: 2 })).toThrow(
      'DataLoader: a tf.data.Dataset of unknown size cannot be split across 2 processes (each takes a consecutive block of the samples, which needs their number); ' +
        'give each process its own part of the data and pass autoDistributedPartitioning: false',
    );
    expect(await epoch(new DataLoader(processOptions(1, 2), generated(), { batchSize: 2, autoDistributedPartitioning: false }))).toEqual([
      [0, 1],
      [2, 3],
      [4, 5],
    ]);
    const y = tf.range(0, 4, 1, 'float32');
    expect(await epoch(new DataLoader(processOptions(1, 2), [y], { batchSize: 2, autoDistributedPartitioning: false }))).toEqual([
      [0, 1],
      [2, 3],
    ]);
    tf.dispose(y);
  });

  it('refuses batchSize: null when it splits the dataset, as PopTorch refuses batch_size=None with auto_distributed_partitioning', () => {
    const y = tf.range(0, 4, 1, 'float32');
    expect(() => new DataLoader(processOptions(0, 2), [y], { batchSize: null })).toThrow(
      'DataLoader: batchSize: null is not allowed when the loader splits the dataset across 2 processes (autoDistributedPartitioning); give each process its part of the dataset and pass autoDistributedPartitioning: false',
    );
    tf.dispose(y);
  });

  it('refuses a dataset smaller than one global batch, saying so', () => {
    const y = tf.range(0, 10, 1, 'float32');
    expect(() => new DataLoader(processOptions(0, 3, 2), [y], { batchSize: 2 })).toThrow(
      'DataLoader: the dataset has 10 samples, fewer than one combined batch of 4 (batchSize 2 × deviceIterations 2 × (replicationFactor 1 / input group size 1) × gradientAccumulation 1) for each of 3 processes; use a smaller batchSize or dropLast: false',
    );
    tf.dispose(y);
  });
});
