/**
 * `DataLoader`: PopTorch's data loader for tfjs. It hands out host batches of
 * exactly the size one model call consumes, so the caller need not do the
 * batch arithmetic of device iterations, replicas and gradient accumulation.
 */
import * as tf from '@tensorflow/tfjs';
import { type ArgumentRule, checkArgument, describeValue, flag, instanceRule, nonNegativeInteger, positiveInteger } from '../option_vocabulary/argument_rules.js';
import { Options } from '../options/options.js';
import { SeededRandom } from './seeded_random.js';

/** One sample of a `tf.data.Dataset`: a tensor, or an array of tensors (`[x, y]`). */
export type DataLoaderSample = tf.Tensor | tf.Tensor[];

/**
 * What a `DataLoader` reads: an array of tensors sharing their first (sample)
 * dimension, such as `[x, y]` with shapes `[N, ...]`; or a `tf.data.Dataset`
 * whose elements are single samples (no batch dimension).
 */
export type DataLoaderDataset = readonly tf.Tensor[] | tf.data.Dataset<DataLoaderSample>;

/** How a `DataLoader` batches and orders the samples. */
export interface DataLoaderOptions {
  /** The micro-batch size: samples per replica per step (default 1). */
  readonly batchSize?: number;
  /** Whether to visit the samples in a new random order each epoch (default false). */
  readonly shuffle?: boolean;
  /**
   * Whether to drop the samples left over after the last full batch (default
   * true). With false, they are yielded as a final, shorter batch; a model
   * call expects full batches, so only use it when you handle the remainder.
   */
  readonly dropLast?: boolean;
  /** The seed of the shuffle; the same seed gives the same orders. Default: a random seed. */
  readonly seed?: number;
}

const optionsRule = instanceRule(Options, 'an Options');
const seedRule: ArgumentRule<number> = { ...nonNegativeInteger, expected: 'a non-negative integer seed' };

/** A shuffle buffer for a `tf.data.Dataset` of unknown size holds this many combined batches. */
const SHUFFLE_BUFFER_BATCHES = 10;

/**
 * Hands out host batches of `combinedBatchSize` samples, as `tf.Tensor[]`
 * (one tensor per component of the dataset). Iterate it with `for await`;
 * each iteration is one epoch.
 *
 * `combinedBatchSize = batchSize × deviceIterations × (replicationFactor /
 * inputReplicaGrouping.size) × gradientAccumulation`. As PopTorch's
 * DataLoader does, the loader freezes the options it is given: later changes
 * to them are refused (derive other options with `options.clone()`), so the
 * loader and the models wrapped with the same options keep agreeing. As in
 * PopTorch, the training option `gradientAccumulation` is always included:
 * it is 1 for inference, where `inferenceModel` refuses anything else.
 * With `opts.Distributed.configureProcessId(processId, numProcesses)`, the
 * loader of each process yields its share of every global batch of
 * `numProcesses × combinedBatchSize` samples: process `p` the samples
 * `p × combinedBatchSize` to `(p + 1) × combinedBatchSize - 1` of it, so the
 * processes' batches of a step are disjoint and together are the global
 * batch (a final short global batch, with `dropLast: false`, is shared as
 * evenly as it divides). Shuffling processes need the same `seed` (or
 * `opts.randomSeed`), so they share one order.
 *
 * The caller owns the yielded tensors and must dispose them. Tensors of an
 * array dataset stay the caller's. Elements of a `tf.data.Dataset` are
 * consumed: as tfjs-data's own `map()` and `fitDataset()` do, the loader
 * disposes each element's tensors once it has stacked them into a batch.
 */
export class DataLoader implements AsyncIterable<tf.Tensor[]> {
  /** The options the loader was built with, frozen by it. */
  readonly options: Options;
  /** The micro-batch size. */
  readonly batchSize: number;
  /** Samples per yielded batch: what one call of a model built with the same options consumes. */
  readonly combinedBatchSize: number;
  /** Batches per epoch, or `undefined` for a `tf.data.Dataset` of unknown or infinite size. */
  readonly length: number | undefined;
  readonly #shuffle: boolean;
  readonly #dropLast: boolean;
  readonly #random: SeededRandom;
  /** This process's index and the number of processes sharing each global batch (`opts.Distributed`). */
  readonly #process: { readonly id: number; readonly count: number };
  /** Samples of one global batch: `combinedBatchSize` for each process. */
  readonly #globalBatchSize: number;
  readonly #source:
    | { readonly kind: 'tensors'; readonly tensors: readonly tf.Tensor[]; readonly samples: number }
    | { readonly kind: 'dataset'; readonly dataset: tf.data.Dataset<DataLoaderSample> };

  /**
   * @param options - the options of the model the batches are for; the loader freezes them.
   * @param dataset - the samples (see {@link DataLoaderDataset}).
   * @param loaderOptions - batch size, shuffling, remainder handling and seed.
   */
  constructor(options: Options, dataset: DataLoaderDataset, loaderOptions: DataLoaderOptions = {}) {
    this.options = checkArgument(optionsRule, options, 'DataLoader: options');
    if (!this.options.isFrozen()) this.options.freeze();
    const settings = this.options.settings;
    this.batchSize = checkArgument(positiveInteger, loaderOptions.batchSize ?? 1, 'DataLoader: batchSize');
    this.#shuffle = checkArgument(flag, loaderOptions.shuffle ?? false, 'DataLoader: shuffle');
    this.#dropLast = checkArgument(flag, loaderOptions.dropLast ?? true, 'DataLoader: dropLast');
    const { processId, numProcesses } = settings.distributed;
    this.#process = { id: processId, count: numProcesses };
    const sharedSeed = loaderOptions.seed ?? (numProcesses > 1 ? settings.randomSeed : undefined);
    if (sharedSeed === undefined && this.#shuffle && numProcesses > 1) {
      throw new RangeError(
        `DataLoader: shuffling across ${numProcesses} processes needs a seed all of them share (the loader's seed, or opts.randomSeed), ` +
          'so that every process shuffles into the same order and takes its own share of it',
      );
    }
    const seed = sharedSeed === undefined ? Math.floor(Math.random() * 2 ** 32) : checkArgument(seedRule, sharedSeed, 'DataLoader: seed');
    this.#random = new SeededRandom(seed);

    const { deviceIterations, replicationFactor, inputReplicaGrouping, training } = settings;
    if (replicationFactor % inputReplicaGrouping.size !== 0) {
      throw new RangeError(`DataLoader: replicationFactor (${replicationFactor}) must be a multiple of the input replica group size (${inputReplicaGrouping.size})`);
    }
    const replicaShards = replicationFactor / inputReplicaGrouping.size;
    this.combinedBatchSize = this.batchSize * deviceIterations * replicaShards * training.gradientAccumulation;
    const arithmetic =
      `batchSize ${this.batchSize} × deviceIterations ${deviceIterations} × ` +
      `(replicationFactor ${replicationFactor} / input group size ${inputReplicaGrouping.size}) × ` +
      `gradientAccumulation ${training.gradientAccumulation}`;

    this.#globalBatchSize = this.combinedBatchSize * numProcesses;
    const processes = numProcesses > 1 ? ` for each of ${numProcesses} processes` : '';
    let samples: number | undefined;
    if (dataset instanceof tf.data.Dataset) {
      const size = dataset.size;
      samples = size === null || !Number.isFinite(size) ? undefined : size;
      const buffer = samples ?? SHUFFLE_BUFFER_BATCHES * this.#globalBatchSize;
      this.#source = {
        kind: 'dataset',
        dataset: this.#shuffle ? dataset.shuffle(Math.max(buffer, 1), String(seed)) : dataset,
      };
    } else {
      samples = checkTensors(dataset);
      this.#source = { kind: 'tensors', tensors: [...dataset], samples };
    }
    if (samples === 0) throw new RangeError('DataLoader: the dataset is empty');
    if (samples !== undefined && this.#dropLast && samples < this.#globalBatchSize) {
      throw new RangeError(
        `DataLoader: the dataset has ${samples} samples, fewer than one combined batch of ${this.combinedBatchSize} ` +
          `(${arithmetic})${processes}; use a smaller batchSize or dropLast: false`,
      );
    }
    this.length = samples === undefined ? undefined : this.#batchesOf(samples);
  }

  /** This process's batches of an epoch over `samples` samples. */
  #batchesOf(samples: number): number {
    const full = Math.floor(samples / this.#globalBatchSize);
    return this.#dropLast ? full : full + (this.#share(samples % this.#globalBatchSize).size > 0 ? 1 : 0);
  }

  /**
   * Where this process's share of a global batch of `size` samples starts
   * and how many it has: `combinedBatchSize` of a full one, an even share of
   * a short one.
   */
  #share(size: number): { start: number; size: number } {
    const { id, count } = this.#process;
    if (size === this.#globalBatchSize) return { start: id * this.combinedBatchSize, size: this.combinedBatchSize };
    const sizeOf = (p: number) => Math.floor(size / count) + (p < size % count ? 1 : 0);
    let start = 0;
    for (let p = 0; p < id; p++) start += sizeOf(p);
    return { start, size: sizeOf(id) };
  }

  /** Starts an epoch: the batches in order (a new order each epoch when shuffling). */
  [Symbol.asyncIterator](): AsyncIterator<tf.Tensor[]> {
    const source = this.#source;
    if (source.kind === 'dataset') return this.#datasetBatches(source.dataset);
    const order = this.#shuffle ? this.#random.permutation(source.samples) : undefined;
    return this.#tensorBatches(source.tensors, source.samples, order);
  }

  async *#tensorBatches(tensors: readonly tf.Tensor[], samples: number, order: Int32Array | undefined): AsyncGenerator<tf.Tensor[]> {
    for (let globalStart = 0; globalStart < samples; globalStart += this.#globalBatchSize) {
      const globalSize = Math.min(this.#globalBatchSize, samples - globalStart);
      if (globalSize < this.#globalBatchSize && this.#dropLast) return;
      const share = this.#share(globalSize);
      if (share.size === 0) return;
      const start = globalStart + share.start;
      const size = share.size;
      yield tf.tidy(() => {
        if (order === undefined) return tensors.map((tensor) => tensor.slice(start, size));
        const indices = tf.tensor1d(order.subarray(start, start + size), 'int32');
        return tensors.map((tensor) => tf.gather(tensor, indices));
      });
    }
  }

  async *#datasetBatches(dataset: tf.data.Dataset<DataLoaderSample>): AsyncGenerator<tf.Tensor[]> {
    const iterator = await dataset.iterator();
    let pending: tf.Tensor[][] = [];
    try {
      for (;;) {
        const { value, done } = await iterator.next();
        if (done) break;
        pending.push(sampleComponents(value, pending[0]?.length));
        if (pending.length === this.#globalBatchSize) {
          const batch = this.#stackShare(pending);
          pending = [];
          yield batch;
        }
      }
      if (pending.length > 0 && !this.#dropLast && this.#share(pending.length).size > 0) {
        const batch = this.#stackShare(pending);
        pending = [];
        yield batch;
      }
    } finally {
      for (const sample of pending) tf.dispose(sample);
    }
  }

  /** Stacks this process's share of a global batch of samples into a batch; disposes every sample. */
  #stackShare(samples: readonly tf.Tensor[][]): tf.Tensor[] {
    const { start, size } = this.#share(samples.length);
    for (const [i, sample] of samples.entries()) if (i < start || i >= start + size) tf.dispose(sample);
    return stackSamples(samples.slice(start, start + size));
  }
}

/** Checks an array dataset and returns its number of samples. */
function checkTensors(dataset: unknown): number {
  if (!Array.isArray(dataset)) {
    throw new TypeError(`DataLoader: the dataset must be an array of tensors sharing their first dimension, or a tf.data.Dataset; got ${describeValue(dataset)}`);
  }
  if (dataset.length === 0) throw new RangeError('DataLoader: the dataset is empty (an array of no tensors)');
  let samples: number | undefined;
  dataset.forEach((tensor: unknown, index) => {
    if (!(tensor instanceof tf.Tensor)) {
      throw new TypeError(`DataLoader: dataset[${index}] must be a tf.Tensor, got ${describeValue(tensor)}`);
    }
    if (tensor.isDisposed) throw new RangeError(`DataLoader: dataset[${index}] is a disposed tensor`);
    if (tensor.rank === 0) {
      throw new RangeError(`DataLoader: dataset[${index}] is a scalar; each tensor needs a first (sample) dimension`);
    }
    const count = tensor.shape[0] as number;
    if (samples !== undefined && count !== samples) {
      throw new RangeError(`DataLoader: all tensors must share their first (sample) dimension; dataset[0] has ${samples} samples, dataset[${index}] has ${count}`);
    }
    samples = count;
  });
  return samples as number;
}

/** The tensors of one `tf.data` element, checked against the number of components of the first element. */
function sampleComponents(value: unknown, expectedComponents: number | undefined): tf.Tensor[] {
  const components = value instanceof tf.Tensor ? [value] : Array.isArray(value) ? [...(value as unknown[])] : undefined;
  if (components === undefined || components.length === 0 || !components.every((item) => item instanceof tf.Tensor)) {
    tf.dispose(tf.tensor_util.getTensorsInContainer(value as tf.TensorContainer));
    throw new TypeError(`DataLoader: each dataset element must be a tensor or an array of tensors, got ${describeValue(value)}`);
  }
  if (expectedComponents !== undefined && components.length !== expectedComponents) {
    tf.dispose(components as tf.Tensor[]);
    throw new RangeError(`DataLoader: every dataset element must have the same number of tensors; the first had ${expectedComponents}, a later one ${components.length}`);
  }
  return components as tf.Tensor[];
}

/** Stacks samples into one batch tensor per component and disposes the samples. */
function stackSamples(samples: readonly tf.Tensor[][]): tf.Tensor[] {
  const first = samples[0] as tf.Tensor[];
  try {
    return tf.tidy(() =>
      first.map((_, component) => {
        try {
          return tf.stack(samples.map((sample) => sample[component] as tf.Tensor));
        } catch (error) {
          const reason = error instanceof Error ? error.message : String(error);
          throw new RangeError(`DataLoader: cannot batch component ${component} of the dataset elements: ${reason}`, { cause: error });
        }
      }),
    );
  } finally {
    for (const sample of samples) tf.dispose(sample);
  }
}
