/**
 * `AsynchronousDataAccessor`: PopTorch's prefetching wrapper of a data
 * loader. A producer reads batches ahead of the consumer into a bounded
 * buffer, so the loader's asynchronous work (a `tf.data` pipeline reading
 * files, a generator awaiting I/O) goes on while the model runs.
 */
import * as tf from '@tensorflow/tfjs';
import { checkArgument, positiveInteger } from '../option_vocabulary/argument_rules.js';
import { Options } from '../options/options.js';
import { batchTensors, type DataLoaderBatch, type DataLoaderSample, type NamedTensors } from './batch_structure.js';
import { DataLoader } from './data_loader.js';

/** How an {@link AsynchronousDataAccessor} prefetches. */
export interface AsynchronousDataAccessorOptions {
  /** Batches read ahead and held until the consumer takes them (default 3). */
  readonly bufferSize?: number;
}

/** What an accessor reads: a `DataLoader`, or any async iterable of batches (one epoch per iteration). */
export type BatchSource<B extends DataLoaderBatch = tf.Tensor[]> = AsyncIterable<B> & { readonly length?: number | undefined };

/** The samples of `dataset` one by one, as a `DataLoader` without batching reads them (a `tf.data.Dataset`'s elements as they are). */
function samplesOf(dataset: readonly tf.Tensor[] | NamedTensors | tf.data.Dataset<DataLoaderSample>): BatchSource<DataLoaderBatch> {
  return new DataLoader(new Options({ fromEnvironment: false }), dataset as readonly tf.Tensor[], { batchSize: null }) as BatchSource<DataLoaderBatch>;
}

/** One epoch's prefetching: the batches read ahead, and how the producer ended. */
class Prefetch<B extends DataLoaderBatch> {
  readonly #buffered: B[] = [];
  readonly #capacity: number;
  #ended = false;
  #failure: { error: unknown } | undefined;
  #stopped = false;
  /** Wakes the consumer waiting for a batch, or the producer waiting for room. */
  #wake: (() => void) | undefined;

  constructor(source: BatchSource<B>, capacity: number) {
    this.#capacity = capacity;
    void this.#produce(source[Symbol.asyncIterator]());
  }

  async #produce(iterator: AsyncIterator<B>): Promise<void> {
    try {
      for (;;) {
        while (this.#buffered.length >= this.#capacity && !this.#stopped) await this.#sleep();
        if (this.#stopped) break;
        const { value, done } = await iterator.next();
        if (done) break;
        if (this.#stopped) {
          tf.dispose(batchTensors(value));
          break;
        }
        this.#buffered.push(value);
        this.#notify();
      }
    } catch (error) {
      this.#failure = { error };
    } finally {
      if (this.#stopped) await iterator.return?.();
      this.#ended = true;
      this.#notify();
    }
  }

  #sleep(): Promise<void> {
    return new Promise((resolve) => (this.#wake = resolve));
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  /** The next batch in order; after the last, `undefined`; a producer's error is thrown once the batches before it are taken. */
  async next(): Promise<B | undefined> {
    for (;;) {
      const batch = this.#buffered.shift();
      if (batch) {
        this.#notify();
        return batch;
      }
      if (this.#ended) {
        if (this.#failure) {
          const { error } = this.#failure;
          this.#failure = undefined;
          throw error;
        }
        return undefined;
      }
      await this.#sleep();
    }
  }

  /** Stops the producer (the batch it is reading is disposed when it arrives) and disposes the batches read ahead. */
  stop(): void {
    this.#stopped = true;
    this.#failure = undefined;
    for (const batch of this.#buffered.splice(0)) tf.dispose(batchTensors(batch));
    this.#notify();
  }
}

/**
 * Reads the batches of `source` (a `DataLoader`) ahead of the consumer, as
 * `poptorch.AsynchronousDataAccessor` does: iterate it with `for await` like
 * the loader (each iteration one epoch, the same batches in the same order);
 * up to `bufferSize` batches wait in a buffer. An error of the loader reaches
 * the consumer after the batches read before it. `terminate()` stops the
 * reading and disposes the batches read ahead; starting another epoch ends
 * the one running the same way. The caller owns the batches it takes.
 *
 * As PopTorch's accessor takes any dataset, the source may also be a
 * dataset (columns of tensors, or a `tf.data.Dataset`): it then hands out
 * the samples one by one, as a `DataLoader` with `batchSize: null` reads
 * them, and its length is the number of samples.
 */
export class AsynchronousDataAccessor<B extends DataLoaderBatch = tf.Tensor[]> implements AsyncIterable<B> {
  /** The batches read ahead at most. */
  readonly bufferSize: number;
  /** Batches per epoch: the source's (samples, for a dataset). */
  readonly length: number | undefined;
  readonly #source: BatchSource<B>;
  #running: Prefetch<B> | undefined;

  constructor(source: BatchSource | readonly tf.Tensor[] | tf.data.Dataset<tf.Tensor | tf.Tensor[]>, options?: AsynchronousDataAccessorOptions);
  constructor(source: BatchSource<B> | B | tf.data.Dataset<B>, options?: AsynchronousDataAccessorOptions);
  constructor(source: BatchSource<B> | B | tf.data.Dataset<DataLoaderSample>, options: AsynchronousDataAccessorOptions = {}) {
    const iterable = typeof (source as Partial<BatchSource<B>> | null)?.[Symbol.asyncIterator] === 'function';
    const dataset = source instanceof tf.data.Dataset || Array.isArray(source) || (typeof source === 'object' && source !== null && !iterable);
    if (!iterable && !dataset) {
      throw new TypeError('AsynchronousDataAccessor: the source must be a DataLoader, another async iterable of batches, or a dataset (tensors, or a tf.data.Dataset)');
    }
    this.#source = iterable ? (source as BatchSource<B>) : (samplesOf(source as readonly tf.Tensor[]) as unknown as BatchSource<B>);
    this.length = this.#source.length;
    this.bufferSize = checkArgument(positiveInteger, options.bufferSize ?? 3, 'AsynchronousDataAccessor: bufferSize');
  }

  /** Starts an epoch, ending any running one. */
  [Symbol.asyncIterator](): AsyncIterator<B> {
    this.terminate();
    const prefetch = new Prefetch(this.#source, this.bufferSize);
    this.#running = prefetch;
    const finish = (): IteratorReturnResult<undefined> => {
      if (this.#running === prefetch) this.terminate();
      return { done: true, value: undefined };
    };
    return {
      next: async () => {
        const batch = await prefetch.next();
        return batch ? { done: false, value: batch } : finish();
      },
      return: async () => finish(),
    };
  }

  /** Stops reading ahead and disposes the batches read but not taken. */
  terminate(): void {
    this.#running?.stop();
    this.#running = undefined;
  }
}
