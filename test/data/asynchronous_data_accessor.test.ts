import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { AsynchronousDataAccessor } from '../../lib/data/asynchronous_data_accessor.js';
import { DataLoader } from '../../lib/data/data_loader.js';
import { options, samples } from './data_samples.js';

beforeAll(async () => {
  await tf.setBackend('cpu');
});

/** The values of every batch of one epoch, component by component, disposing the batches. */
async function epoch(batches: AsyncIterable<tf.Tensor[]>): Promise<number[][][]> {
  const out: number[][][] = [];
  for await (const batch of batches) {
    out.push(batch.map((t) => Array.from(t.dataSync())));
    tf.dispose(batch);
  }
  return out;
}

/** Lets the producer run until it has nothing left to do (it waits for room or for the source). */
async function settle(): Promise<void> {
  for (let i = 0; i < 200; i++) await new Promise((resolve) => setImmediate(resolve));
}

describe('AsynchronousDataAccessor', () => {
  it('yields the batches of the DataLoader, in the same order, epoch after epoch', async () => {
    const [x, y] = samples(40);
    const loader = () => new DataLoader(options().deviceIterations(2), [x, y], { batchSize: 3, shuffle: true, seed: 9 });
    const plain = loader();
    const accessor = new AsynchronousDataAccessor(loader(), { bufferSize: 2 });
    expect(accessor.length).toBe(6);
    for (let e = 0; e < 2; e++) {
      const expected = await epoch(plain);
      expect(expected).toHaveLength(6);
      expect(await epoch(accessor)).toEqual(expected);
    }
    tf.dispose([x, y]);
  });

  it('reads ahead of the consumer up to bufferSize batches', async () => {
    let read = 0;
    const dataset = tf.data.generator(function* () {
      for (let i = 0; i < 40; i++) {
        read++;
        yield tf.scalar(i);
      }
    });
    const accessor = new AsynchronousDataAccessor(new DataLoader(options(), dataset, { batchSize: 2 }), { bufferSize: 3 });
    const iterator = accessor[Symbol.asyncIterator]();
    const first = await iterator.next();
    expect(Array.from((first.value as tf.Tensor[])[0]!.dataSync())).toEqual([0, 1]);
    await settle();
    // The batch taken and three read ahead; no more until the consumer takes one.
    expect(read).toBe(2 * (1 + 3));
    tf.dispose(first.value as tf.Tensor[]);
    const second = await iterator.next();
    await settle();
    expect(read).toBe(2 * (2 + 3));
    tf.dispose(second.value as tf.Tensor[]);
    accessor.terminate();
  });

  it("gives the consumer the loader's error after the batches read before it", async () => {
    const dataset = tf.data.generator(function* () {
      for (let i = 0; i < 5; i++) yield tf.scalar(i);
      throw new Error('the sample file is unreadable');
    });
    const accessor = new AsynchronousDataAccessor(new DataLoader(options(), dataset, { batchSize: 2 }));
    const taken: number[][] = [];
    await expect(
      (async () => {
        for await (const batch of accessor) {
          taken.push(Array.from(batch[0]!.dataSync()));
          tf.dispose(batch);
        }
      })(),
    ).rejects.toThrow('the sample file is unreadable');
    expect(taken).toEqual([
      [0, 1],
      [2, 3],
    ]);
  });

  it('terminate() stops reading and disposes the batches read ahead; a new epoch starts afresh', async () => {
    const [x, y] = samples(12);
    const accessor = new AsynchronousDataAccessor(new DataLoader(options(), [x, y], { batchSize: 2 }), { bufferSize: 4 });
    const before = tf.memory().numTensors;
    const iterator = accessor[Symbol.asyncIterator]();
    const first = await iterator.next();
    tf.dispose(first.value as tf.Tensor[]);
    await settle();
    expect(tf.memory().numTensors).toBe(before + 4 * 2);
    accessor.terminate();
    await settle();
    expect(tf.memory().numTensors).toBe(before);
    expect(await iterator.next()).toEqual({ done: true, value: undefined });
    expect((await epoch(accessor)).map(([, ys]) => ys)).toEqual([
      [0, 1],
      [2, 3],
      [4, 5],
      [6, 7],
      [8, 9],
      [10, 11],
    ]);
    expect(tf.memory().numTensors).toBe(before);
    tf.dispose([x, y]);
  });

  it('over a dataset, hands out its samples one by one, its length the number of samples (test_iterable_dataset, test_indexable_dataloader_len)', async () => {
    const [x, y] = samples(5);
    const columns = new AsynchronousDataAccessor([x, y]);
    expect(columns.length).toBe(5);
    for (let e = 0; e < 2; e++) {
      expect(await epoch(columns)).toEqual([0, 1, 2, 3, 4].map((i) => [[i, i + 0.5], [i]]));
    }
    const named = new AsynchronousDataAccessor({ data: x, label: y });
    const labels: number[] = [];
    for await (const { data, label } of named) {
      expect(data!.shape).toEqual([2]);
      labels.push(label!.dataSync()[0]!);
      tf.dispose([data!, label!]);
    }
    expect(labels).toEqual([0, 1, 2, 3, 4]);
    const generated = tf.data.generator(function* () {
      for (let i = 0; i < 3; i++) yield tf.fill([2, 3], i);
    });
    const accessor = new AsynchronousDataAccessor(generated);
    expect(accessor.length).toBeUndefined();
    for (let e = 0; e < 2; e++) expect((await epoch(accessor)).map(([t]) => t![0])).toEqual([0, 1, 2]);
    tf.dispose([x, y]);
  });

  it('refuses a source that is neither an async iterable nor a dataset, and a bufferSize that is not a positive integer', () => {
    expect(() => new AsynchronousDataAccessor(42 as never)).toThrow(
      'AsynchronousDataAccessor: the source must be a DataLoader, another async iterable of batches, or a dataset (tensors, or a tf.data.Dataset)',
    );
    expect(() => new AsynchronousDataAccessor([] as never)).toThrow('DataLoader: the dataset is empty (an array of no tensors)');
    const [x] = samples(4);
    expect(() => new AsynchronousDataAccessor(new DataLoader(options(), [x]), { bufferSize: 0 })).toThrow('AsynchronousDataAccessor: bufferSize');
    tf.dispose(x);
  });
});
