/**
 * `AsynchronousDataAccessor`: PopTorch's prefetching wrapper of a data
 * loader. A producer reads batches ahead of the consumer into a bounded
 * buffer, so the loader's asynchronous work (a `tf.data` pipeline reading
 * files, a generator awaiting I/O) goes on while the model runs.
 */
import type * as tf from '@tensorflow/tfjs';
import { checkArgument, positiveInteger } from '../option_vocabulary/argument_rules.js';

/** How an {@link AsynchronousDataAccessor} prefetches. */
export interface AsynchronousDataAccessorOptions {
  /** Batches read ahead and held until the consumer takes them (default 3). */
  readonly bufferSize?: number;
}

/** What an accessor reads: a `DataLoader`, or any async iterable of batches (one epoch per iteration). */
export type BatchSource = AsyncIterable<tf.Tensor[]> & { readonly length?: number | undefined };

/** One epoch's prefetching: the batches read ahead, and how the producer ended. */
class Prefetch {
  readonly #buffered: tf.Tensor[][] = [];
  readonly #capacity: number;
  #ended = false;
  #failure: { error: unknown } | undefined;
  #stopped = false;
  /** Wakes the consumer waiting for a batch, or the producer waiting for room. */
  #wake: (() => void) | undefined;

  constructor(source: BatchSource, capacity: number) {
    this.#capacity = capacity;
    void this.#produce(source[Symbol.asyncIterator]());
  }

  async #produce(iterator: AsyncIterator<tf.Tensor[]>): Promise<void> {
    try {
      for (;;) {
        while (this.#buffered.length >= this.#capacity && !this.#stopped) await this.#sleep();
        if (this.#stopped) break;
        const { value, done } = await iterator.next();
        if (done) break;
        if (this.#stopped) {
          for (const tensor of value) tensor.dispose();
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
  async next(): Promise<tf.Tensor[] | undefined> {
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
    for (const batch of this.#buffered.splice(0)) for (const tensor of batch) tensor.dispose();
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
 */
export class AsynchronousDataAccessor implements AsyncIterable<tf.Tensor[]> {
  /** The batches read ahead at most. */
  readonly bufferSize: number;
  /** Batches per epoch: the source's. */
  readonly length: number | undefined;
  readonly #source: BatchSource;
  #running: Prefetch | undefined;

  constructor(source: BatchSource, options: AsynchronousDataAccessorOptions = {}) {
    if (typeof (source as Partial<BatchSource> | null)?.[Symbol.asyncIterator] !== 'function') {
      throw new TypeError('AsynchronousDataAccessor: the source must be a DataLoader or another async iterable of batches');
    }
    this.#source = source;
    this.length = source.length;
    this.bufferSize = checkArgument(positiveInteger, options.bufferSize ?? 3, 'AsynchronousDataAccessor: bufferSize');
  }

  /** Starts an epoch, ending any running one. */
  [Symbol.asyncIterator](): AsyncIterator<tf.Tensor[]> {
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
