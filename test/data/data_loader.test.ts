import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { DataLoader } from '../../lib/data/data_loader.js';
import { CommGroupType, type Options } from '../../lib/options/index.js';
import { options, samples } from './data_samples.js';

beforeAll(async () => {
  await tf.setBackend('cpu');
});

/** Runs one epoch and returns the y values of each batch, disposing the batches. */
async function epoch(loader: DataLoader, component = 1): Promise<number[][]> {
  const batches: number[][] = [];
  for await (const batch of loader) {
    batches.push(Array.from(await (batch[component] as tf.Tensor).data()));
    tf.dispose(batch);
  }
  return batches;
}

describe('combinedBatchSize', () => {
  it('is batchSize × deviceIterations × replicas / input group size × gradientAccumulation', () => {
    const [x, y] = samples(1000);
    const opts = options().deviceIterations(3).replicationFactor(8).inputReplicaGrouping(4, CommGroupType.Consecutive);
    opts.Training.gradientAccumulation(5);
    const loader = new DataLoader(opts, [x, y], { batchSize: 2 });
    expect(loader.batchSize).toBe(2);
    expect(loader.combinedBatchSize).toBe(2 * 3 * (8 / 4) * 5);
    expect(new DataLoader(options(), [x, y]).combinedBatchSize).toBe(1);
    expect(new DataLoader(options().replicationFactor(4), [x, y], { batchSize: 3 }).combinedBatchSize).toBe(12);
    tf.dispose([x, y]);
  });

  it('refuses a replication factor that the input group size does not divide', () => {
    const [x, y] = samples(100);
    const opts = options().replicationFactor(6).inputReplicaGrouping(4, CommGroupType.Orthogonal);
    expect(() => new DataLoader(opts, [x, y])).toThrow('DataLoader: replicationFactor (6) must be a multiple of the input replica group size (4)');
    tf.dispose([x, y]);
  });
});

describe('tensor datasets', () => {
  it('yields full batches of combinedBatchSize in order and drops the remainder by default', async () => {
    const [x, y] = samples(10);
    const loader = new DataLoader(options().deviceIterations(2), [x, y], { batchSize: 2 });
    expect(loader.combinedBatchSize).toBe(4);
    expect(loader.length).toBe(2);
    const shapes: number[][][] = [];
    for await (const batch of loader) {
      shapes.push(batch.map((tensor) => tensor.shape));
      tf.dispose(batch);
    }
    expect(shapes).toEqual([
      [[4, 2], [4]],
      [[4, 2], [4]],
    ]);
    expect(await epoch(loader)).toEqual([
      [0, 1, 2, 3],
      [4, 5, 6, 7],
    ]);
    tf.dispose([x, y]);
  });

  it('keeps the rows of all tensors together', async () => {
    const [x, y] = samples(12);
    const loader = new DataLoader(options(), [x, y], { batchSize: 4, shuffle: true, seed: 1 });
    for await (const [bx, by] of loader) {
      const xs = (await (bx as tf.Tensor).array()) as number[][];
      const ys = Array.from(await (by as tf.Tensor).data());
      expect(xs).toEqual(ys.map((value) => [value, value + 0.5]));
      tf.dispose([bx as tf.Tensor, by as tf.Tensor]);
    }
    tf.dispose([x, y]);
  });

  it('dropLast: false yields the remainder as a final shorter batch, with the warning PopTorch gives', async () => {
    const [x, y] = samples(10);
    const lines: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => (lines.push(String(chunk)), true));
    const loader = new DataLoader(options(), [x, y], { batchSize: 4, dropLast: false });
    vi.restoreAllMocks();
    expect(lines.filter((l) => l.includes(' W: DataLoader'))).toEqual([
      expect.stringContaining(
        'W: DataLoader: the number of samples in the dataset (10) is not divisible by the number of samples processed per step (4) and dropLast is false: the last batch will have 2 samples',
      ),
    ]);
    expect(loader.length).toBe(3);
    expect(await epoch(loader)).toEqual([
      [0, 1, 2, 3],
      [4, 5, 6, 7],
      [8, 9],
    ]);
    const small = new DataLoader(options(), [x, y], { batchSize: 16, dropLast: false });
    expect(await epoch(small)).toEqual([[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]]);
    tf.dispose([x, y]);
  });

  it('shuffles reproducibly under a seed, with a new order each epoch', async () => {
    const [x, y] = samples(32);
    const first = new DataLoader(options(), [x, y], { batchSize: 8, shuffle: true, seed: 1234 });
    const second = new DataLoader(options(), [x, y], { batchSize: 8, shuffle: true, seed: 1234 });
    const other = new DataLoader(options(), [x, y], { batchSize: 8, shuffle: true, seed: 4321 });
    const epochA = await epoch(first);
    const epochB = await epoch(first);
    expect(await epoch(second)).toEqual(epochA);
    expect(await epoch(second)).toEqual(epochB);
    expect(epochB).not.toEqual(epochA);
    expect(await epoch(other)).not.toEqual(epochA);
    expect(epochA.flat().sort((a, b) => a - b)).toEqual(Array.from({ length: 32 }, (_, i) => i));
    expect(epochA.flat()).not.toEqual(Array.from({ length: 32 }, (_, i) => i));
    tf.dispose([x, y]);
  });

  it('leaks no tensors, even when an epoch is abandoned', async () => {
    const [x, y] = samples(64);
    const before = tf.memory().numTensors;
    const loader = new DataLoader(options().deviceIterations(2), [x, y], { batchSize: 4, shuffle: true, seed: 7 });
    for (let round = 0; round < 3; round += 1) await epoch(loader);
    for await (const batch of loader) {
      tf.dispose(batch);
      break;
    }
    expect(tf.memory().numTensors).toBe(before);
    expect(x.isDisposed || y.isDisposed).toBe(false);
    tf.dispose([x, y]);
  });

  it('yields tensors the caller owns: they outlive the dataset tensors', async () => {
    const [x, y] = samples(4);
    const batches: tf.Tensor[][] = [];
    for await (const batch of new DataLoader(options(), [x, y], { batchSize: 2 })) batches.push(batch);
    tf.dispose([x, y]);
    expect(await Promise.all(batches.map(async ([, by]) => Array.from(await (by as tf.Tensor).data())))).toEqual([
      [0, 1],
      [2, 3],
    ]);
    tf.dispose(batches.flat());
  });
});

describe('tf.data datasets', () => {
  function generated(n: number): tf.data.Dataset<tf.Tensor[]> {
    return tf.data.generator(function* () {
      for (let i = 0; i < n; i += 1) yield [tf.tensor1d([i, i + 0.5]), tf.scalar(i)];
    });
  }

  it('stacks elements into combined batches, disposing the elements', async () => {
    const before = tf.memory().numTensors;
    const loader = new DataLoader(options().deviceIterations(2), generated(9), { batchSize: 2 });
    expect(loader.combinedBatchSize).toBe(4);
    expect(loader.length).toBeUndefined();
    const batches: number[][][] = [];
    for await (const batch of loader) {
      batches.push(batch.map((tensor) => tensor.shape));
      tf.dispose(batch);
    }
    expect(batches).toEqual([
      [[4, 2], [4]],
      [[4, 2], [4]],
    ]);
    expect(tf.memory().numTensors).toBe(before);
  });

  it('accepts single-tensor elements and knows the length of a sized dataset', async () => {
    const values = tf.data.array([0, 1, 2, 3, 4, 5, 6]).map((value) => tf.scalar(value as number));
    const loader = new DataLoader(options(), values, { batchSize: 3, dropLast: false });
    expect(loader.length).toBe(3);
    expect(await epoch(loader, 0)).toEqual([[0, 1, 2], [3, 4, 5], [6]]);
  });

  it('shuffles reproducibly under a seed', async () => {
    const loaderA = new DataLoader(options(), generated(24), { batchSize: 6, shuffle: true, seed: 99 });
    const loaderB = new DataLoader(options(), generated(24), { batchSize: 6, shuffle: true, seed: 99 });
    const a = await epoch(loaderA);
    expect(await epoch(loaderB)).toEqual(a);
    expect(a.flat().sort((p, q) => p - q)).toEqual(Array.from({ length: 24 }, (_, i) => i));
  });

  it('disposes the pending samples when an epoch is abandoned', async () => {
    const before = tf.memory().numTensors;
    const loader = new DataLoader(options(), generated(20), { batchSize: 4 });
    for await (const batch of loader) {
      tf.dispose(batch);
      break;
    }
    expect(tf.memory().numTensors).toBe(before);
  });

  it('refuses elements that are not tensors, or that change shape', async () => {
    const numbers = tf.data.array([1, 2, 3]) as unknown as tf.data.Dataset<tf.Tensor>;
    await expect(epoch(new DataLoader(options(), numbers))).rejects.toThrow(
      'DataLoader: each dataset element must be a tensor, an array of tensors or an object of tensors, got 1',
    );
    const before = tf.memory().numTensors;
    const ragged = tf.data.generator(function* () {
      yield tf.tensor1d([1, 2]);
      yield tf.tensor1d([1, 2, 3]);
    });
    await expect(epoch(new DataLoader(options(), ragged, { batchSize: 2 }))).rejects.toThrow('DataLoader: cannot batch component 0 of the dataset elements');
    expect(tf.memory().numTensors).toBe(before);
  });
});

describe('batchSize: null', () => {
  it('yields the samples one by one without a batch dimension, epoch after epoch (test_batch_size_None, test_iterable_dataset_len)', async () => {
    const generated = () =>
      tf.data.generator(function* () {
        for (let i = 0; i < 10; i++) yield tf.fill([2, 3], i);
      });
    const loader = new DataLoader(options().deviceIterations(4), generated(), { batchSize: null, dropLast: false });
    expect([loader.batchSize, loader.combinedBatchSize, loader.length]).toEqual([null, null, undefined]);
    for (let e = 0; e < 2; e++) {
      let count = 0;
      for await (const [t] of loader) {
        expect(t!.shape).toEqual([2, 3]);
        expect(t!.dataSync()[0]).toBe(count++);
        tf.dispose(t!);
      }
      expect(count).toBe(10);
    }
    const sized = new DataLoader(
      options(),
      tf.data.array([0, 1, 2]).map((v) => tf.scalar(v as number)),
      { batchSize: null },
    );
    expect(sized.length).toBe(3);
  });

  it('yields each sample of a column dataset, shuffled too, with all its components', async () => {
    const [x, y] = samples(6);
    const loader = new DataLoader(options(), [x, y], { batchSize: null, shuffle: true, seed: 3 });
    expect(loader.length).toBe(6);
    const seen: number[] = [];
    for await (const [bx, by] of loader) {
      expect([bx!.shape, by!.shape]).toEqual([[2], []]);
      const value = by!.dataSync()[0]!;
      expect(Array.from(bx!.dataSync())).toEqual([value, value + 0.5]);
      seen.push(value);
      tf.dispose([bx!, by!]);
    }
    expect([...seen].sort()).toEqual([0, 1, 2, 3, 4, 5]);
    expect(seen).not.toEqual([0, 1, 2, 3, 4, 5]);
    tf.dispose([x, y]);
  });
});

describe('datasets of objects of tensors', () => {
  it('yield batches as objects with the same keys (test_dictionary_dataset)', async () => {
    const [x, y] = samples(500);
    const label = y.reshape([500, 1]);
    const loader = new DataLoader(options().deviceIterations(2).replicationFactor(3), { data: x, label });
    expect(loader.combinedBatchSize).toBe(6);
    let it = 0;
    for await (const batch of loader) {
      expect(Object.keys(batch).sort()).toEqual(['data', 'label']);
      expect([batch.data!.shape, batch.label!.shape]).toEqual([
        [6, 2],
        [6, 1],
      ]);
      if (it === 1) expect(Array.from(batch.label!.dataSync())).toEqual([6, 7, 8, 9, 10, 11]);
      tf.dispose([batch.data!, batch.label!]);
      it++;
    }
    expect(it).toBe(Math.floor(500 / 6));
    tf.dispose([x, y, label]);
  });

  it('stack the elements of a tf.data.Dataset of objects by key, whatever the key order of each element', async () => {
    const before = tf.memory().numTensors;
    const generated = tf.data.generator(function* () {
      for (let i = 0; i < 4; i++) yield i % 2 === 0 ? { data: tf.fill([3], i), label: tf.scalar(i) } : { label: tf.scalar(i), data: tf.fill([3], i) };
    });
    const loader = new DataLoader(options(), generated, { batchSize: 2 });
    const labels: number[][] = [];
    for await (const { data, label } of loader) {
      expect(data!.shape).toEqual([2, 3]);
      labels.push(Array.from(label!.dataSync()));
      tf.dispose([data!, label!]);
    }
    expect(labels).toEqual([
      [0, 1],
      [2, 3],
    ]);
    expect(tf.memory().numTensors).toBe(before);
  });

  it('refuse elements whose keys differ from the first, and object datasets with a bad column', async () => {
    const changing = tf.data.generator(function* () {
      yield { data: tf.scalar(0) };
      yield { other: tf.scalar(1) };
    });
    const loader = new DataLoader(options(), changing as tf.data.Dataset<{ data: tf.Tensor }>, { batchSize: 2 });
    const read = async () => {
      for await (const batch of loader) tf.dispose(Object.values(batch));
    };
    await expect(read()).rejects.toThrow(
      'DataLoader: every dataset element must have the same structure; the first was an object of tensors with keys data, a later one an object of tensors with keys other',
    );
    const [x] = samples(4);
    expect(() => new DataLoader(options(), { data: x, label: tf.zeros([3]) })).toThrow(
      'DataLoader: all tensors must share their first (sample) dimension; dataset.data has 4 samples, dataset.label has 3',
    );
    expect(() => new DataLoader(options(), { data: x, label: 3 as unknown as tf.Tensor })).toThrow('DataLoader: dataset.label must be a tf.Tensor, got 3');
    tf.dispose(x);
  });
});

describe('DataLoader argument checks', () => {
  it('refuses bad datasets', () => {
    const [x, y] = samples(10);
    const z = tf.zeros([8, 3]);
    const scalar = tf.scalar(1);
    expect(() => new DataLoader(options(), [x, z])).toThrow('DataLoader: all tensors must share their first (sample) dimension; dataset[0] has 10 samples, dataset[1] has 8');
    expect(() => new DataLoader(options(), [])).toThrow('DataLoader: the dataset is empty');
    expect(() => new DataLoader(options(), [tf.zeros([0, 2])])).toThrow('DataLoader: the dataset is empty');
    expect(() => new DataLoader(options(), [x, [1, 2] as unknown as tf.Tensor])).toThrow(TypeError);
    expect(() => new DataLoader(options(), [x, [1, 2] as unknown as tf.Tensor])).toThrow('DataLoader: dataset[1] must be a tf.Tensor, got the array [1,2]');
    expect(() => new DataLoader(options(), [scalar])).toThrow('DataLoader: dataset[0] is a scalar');
    expect(() => new DataLoader(options(), x as unknown as tf.Tensor[])).toThrow(TypeError);
    tf.dispose([x, y, z, scalar]);
  });

  it('refuses a dataset smaller than one combined batch, showing the arithmetic', () => {
    const [x, y] = samples(10);
    const opts = options().deviceIterations(2);
    opts.Training.gradientAccumulation(2);
    expect(() => new DataLoader(opts, [x, y], { batchSize: 4 })).toThrow(
      'DataLoader: the dataset has 10 samples, fewer than one combined batch of 16 ' +
        '(batchSize 4 × deviceIterations 2 × (replicationFactor 1 / input group size 1) × gradientAccumulation 2); ' +
        'use a smaller batchSize or dropLast: false',
    );
    tf.dispose([x, y]);
  });

  it('refuses bad loader options', () => {
    const [x, y] = samples(10);
    expect(() => new DataLoader(options(), [x, y], { batchSize: 0 })).toThrow('DataLoader: batchSize: expected a positive integer, got 0');
    expect(() => new DataLoader(options(), [x, y], { batchSize: 1.5 })).toThrow(RangeError);
    expect(() => new DataLoader(options(), [x, y], { shuffle: 'yes' as unknown as boolean })).toThrow(TypeError);
    expect(() => new DataLoader(options(), [x, y], { dropLast: 1 as unknown as boolean })).toThrow('DataLoader: dropLast: expected a boolean');
    expect(() => new DataLoader(options(), [x, y], { seed: -1 })).toThrow('DataLoader: seed: expected a non-negative integer seed, got -1');
    expect(() => new DataLoader({} as Options, [x, y])).toThrow('DataLoader: options: expected an Options, got the object {}');
    tf.dispose([x, y]);
  });
});
