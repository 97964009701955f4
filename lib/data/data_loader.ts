/**
 * `DataLoader`: PopTorch's data loader for tfjs. It hands out host batches of
 * exactly the size one model call consumes, so the caller need not do the
 * batch arithmetic of device iterations, replicas and gradient accumulation.
 */
import * as tf from '@tensorflow/tfjs';
import { getLogger } from '../common/log.js';
import { type ArgumentRule, checkArgument, describeValue, flag, instanceRule, nonNegativeInteger, positiveInteger } from '../option_vocabulary/argument_rules.js';
import { Options } from '../options/options.js';
import {
  type BatchStructure,
  columnStructure,
  columnTensors,
  type DataLoaderBatch,
  type DataLoaderSample,
  datasetColumns,
  elementComponents,
  type NamedTensors,
  rebuild,
} from './batch_structure.js';
import { type ProcessShare, processShare } from './process_share.js';
import { SeededRandom } from './seeded_random.js';

export type { DataLoaderBatch, DataLoaderSample, NamedTensors } from './batch_structure.js';

const log = getLogger('data');

/**
 * What a `DataLoader` reads: tensors sharing their first (sample) dimension,
 * in an array (`[x, y]` with shapes `[N, ...]`) or an object
 * (`{ data, label }`); or a `tf.data.Dataset` whose elements are single
 * samples (no batch dimension): a tensor, an array or an object of tensors.
 */
export type DataLoaderDataset = readonly tf.Tensor[] | NamedTensors | tf.data.Dataset<DataLoaderSample>;

/** How a `DataLoader` batches and orders the samples. */
export interface DataLoaderOptions {
  /**
   * The micro-batch size: samples per replica per step (default 1). `null`
   * turns batching off, as PopTorch's `batch_size=None`: the loader yields
   * the samples one by one, without a batch dimension, and has no combined
   * batch size.
   */
  readonly batchSize?: number | null;
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
  /**
   * Whether each process of a multi-process run (`opts.Distributed`) takes
   * its own block of the dataset (default true, as PopTorch's
   * `auto_distributed_partitioning`). With false, the dataset is taken to be
   * this process's part already and is read whole.
   */
  readonly autoDistributedPartitioning?: boolean;
}

const optionsRule = instanceRule(Options, 'an Options');
const seedRule: ArgumentRule<number> = { ...nonNegativeInteger, expected: 'a non-negative integer seed' };

/** A shuffle buffer for a `tf.data.Dataset` of unknown size holds this many combined batches. */
const SHUFFLE_BUFFER_BATCHES = 10;

/** Where a loader's samples come from: columns of tensors, or a `tf.data.Dataset` of samples. */
type Source =
  | { readonly kind: 'columns'; readonly tensors: readonly tf.Tensor[]; readonly structure: BatchStructure; readonly samples: number }
  | { readonly kind: 'dataset'; readonly dataset: tf.data.Dataset<DataLoaderSample> };

/**
 * Hands out host batches of `combinedBatchSize` samples, in the structure of
 * the dataset: `tf.Tensor[]` (one tensor per component) for an array dataset
 * or a `tf.data.Dataset` of tensors or arrays, an object of tensors for a
 * dataset of objects (type it with `DataLoader<{ x: tf.Tensor; y: tf.Tensor }>`
 * or let TypeScript infer it). Iterate it with `for await`; each iteration
 * is one epoch.
 *
 * `combinedBatchSize = batchSize × deviceIterations × (replicationFactor /
 * inputReplicaGrouping.size) × gradientAccumulation`. As PopTorch's
 * DataLoader does, the loader freezes the options it is given: later changes
 * to them are refused (derive other options with `options.clone()`), so the
 * loader and the models wrapped with the same options keep agreeing. As in
 * PopTorch, the training option `gradientAccumulation` is always included:
 * it is 1 for inference, where `inferenceModel` refuses anything else.
 * With `batchSize: null`, samples come one at a time (no batch dimension)
 * and `combinedBatchSize` is null.
 *
 * With `opts.Distributed.configureProcessId(processId, numProcesses)`, each
 * process reads its own consecutive block of the samples, as PopTorch's
 * DataLoader splits a dataset (see `process_share.ts`): with `dropLast`, the
 * same whole number of combined batches each; without it, the samples as
 * evenly as they divide. Shuffling processes need the same `seed` (or
 * `opts.randomSeed`): every process shuffles all the samples into the same
 * order and takes its block of it. A `tf.data.Dataset` is split the same way
 * when its size is known; one of unknown size cannot be split (as in
 * PopTorch): give each process its part and `autoDistributedPartitioning: false`.
 *
 * The caller owns the yielded tensors and must dispose them. Tensors of a
 * column dataset stay the caller's. Elements of a `tf.data.Dataset` are
 * consumed: as tfjs-data's own `map()` and `fitDataset()` do, the loader
 * disposes each element's tensors once it has stacked them into a batch.
 */
export class DataLoader<B extends DataLoaderBatch = tf.Tensor[]> implements AsyncIterable<B> {
  /** The options the loader was built with, frozen by it. */
  readonly options: Options;
  /** The micro-batch size, or null when the loader does not batch. */
  readonly batchSize: number | null;
  /** Samples per yielded batch: what one call of a model built with the same options consumes (null when the loader does not batch). */
  readonly combinedBatchSize: number | null;
  /** Batches (samples, without batching) per epoch of this process, or `undefined` for a `tf.data.Dataset` of unknown or infinite size. */
  readonly length: number | undefined;
  readonly #shuffle: boolean;
  readonly #dropLast: boolean;
  readonly #random: SeededRandom;
  /** Samples read together: the combined batch, or 1 without batching. */
  readonly #step: number;
  /** This process's block of the samples (its whole for a dataset of unknown size). */
  readonly #share: ProcessShare;
  readonly #source: Source;

  /**
   * @param options - the options of the model the batches are for; the loader freezes them.
   * @param dataset - the samples (see {@link DataLoaderDataset}).
   * @param loaderOptions - batch size, shuffling, remainder handling, seed and partitioning.
   */
  constructor(options: Options, dataset: readonly tf.Tensor[] | tf.data.Dataset<tf.Tensor | tf.Tensor[]>, loaderOptions?: DataLoaderOptions);
  constructor(options: Options, dataset: B | tf.data.Dataset<B>, loaderOptions?: DataLoaderOptions);
  // biome-ignore lint/complexity/noExcessiveCognitiveComplexity: checks each loader option and its combination with the others in turn, each error naming the option, as PopTorch's DataLoader does in its constructor
  constructor(options: Options, dataset: DataLoaderDataset, loaderOptions: DataLoaderOptions = {}) {
    this.options = checkArgument(optionsRule, options, 'DataLoader: options');
    if (!this.options.isFrozen()) this.options.freeze();
    const settings = this.options.settings;
    this.batchSize = loaderOptions.batchSize === null ? null : checkArgument(positiveInteger, loaderOptions.batchSize ?? 1, 'DataLoader: batchSize');
    this.#shuffle = checkArgument(flag, loaderOptions.shuffle ?? false, 'DataLoader: shuffle');
    this.#dropLast = checkArgument(flag, loaderOptions.dropLast ?? true, 'DataLoader: dropLast');
    const partitioned = checkArgument(flag, loaderOptions.autoDistributedPartitioning ?? true, 'DataLoader: autoDistributedPartitioning');
    const { processId, numProcesses } = settings.distributed;
    const processes = partitioned ? numProcesses : 1;
    if (processes > 1 && this.batchSize === null) {
      throw new RangeError(
        `DataLoader: batchSize: null is not allowed when the loader splits the dataset across ${processes} processes (autoDistributedPartitioning); ` +
          'give each process its part of the dataset and pass autoDistributedPartitioning: false',
      );
    }
    const sharedSeed = loaderOptions.seed ?? (processes > 1 ? settings.randomSeed : undefined);
    if (sharedSeed === undefined && this.#shuffle && processes > 1) {
      throw new RangeError(
        `DataLoader: shuffling across ${processes} processes needs a seed all of them share (the loader's seed, or opts.randomSeed), ` +
          'so that every process shuffles into the same order and takes its own block of it',
      );
    }
    const seed = sharedSeed === undefined ? Math.floor(Math.random() * 2 ** 32) : checkArgument(seedRule, sharedSeed, 'DataLoader: seed');
    this.#random = new SeededRandom(seed);

    const { deviceIterations, replicationFactor, inputReplicaGrouping, training } = settings;
    if (replicationFactor % inputReplicaGrouping.size !== 0) {
      throw new RangeError(`DataLoader: replicationFactor (${replicationFactor}) must be a multiple of the input replica group size (${inputReplicaGrouping.size})`);
    }
    const replicaShards = replicationFactor / inputReplicaGrouping.size;
    this.combinedBatchSize = this.batchSize === null ? null : this.batchSize * deviceIterations * replicaShards * training.gradientAccumulation;
    this.#step = this.combinedBatchSize ?? 1;

    let samples: number | undefined;
    if (dataset instanceof tf.data.Dataset) {
      const size = dataset.size;
      samples = size === null || !Number.isFinite(size) ? undefined : size;
      if (samples === undefined && processes > 1) {
        throw new RangeError(
          `DataLoader: a tf.data.Dataset of unknown size cannot be split across ${processes} processes (each takes a consecutive block of the samples, which needs their number); ` +
            'give each process its own part of the data and pass autoDistributedPartitioning: false',
        );
      }
      const buffer = samples ?? SHUFFLE_BUFFER_BATCHES * this.#step;
      this.#source = { kind: 'dataset', dataset: this.#shuffle ? dataset.shuffle(Math.max(buffer, 1), String(seed)) : dataset };
    } else {
      samples = checkColumns(dataset);
      const columns = dataset as readonly tf.Tensor[] | NamedTensors;
      const structure = columnStructure(columns);
      this.#source = { kind: 'columns', tensors: columnTensors(columns, structure), structure, samples };
    }
    if (samples === 0) throw new RangeError('DataLoader: the dataset is empty');
    const global = this.#step * processes;
    if (samples !== undefined && this.combinedBatchSize !== null && this.#dropLast && samples < global) {
      const arithmetic =
        `batchSize ${this.batchSize} × deviceIterations ${deviceIterations} × ` +
        `(replicationFactor ${replicationFactor} / input group size ${inputReplicaGrouping.size}) × ` +
        `gradientAccumulation ${training.gradientAccumulation}`;
      throw new RangeError(
        `DataLoader: the dataset has ${samples} samples, fewer than one combined batch of ${this.combinedBatchSize} ` +
          `(${arithmetic})${processes > 1 ? ` for each of ${processes} processes` : ''}; use a smaller batchSize or dropLast: false`,
      );
    }
    if (samples !== undefined && this.combinedBatchSize !== null && !this.#dropLast && samples % global !== 0) {
      log.warn(
        `DataLoader: the number of samples in the dataset (${samples}) is not divisible by the number of samples processed per step (${global}) and dropLast is false: ` +
          `the last batch will have ${samples % global} samples. To avoid having to handle this case, use dropLast: true`,
      );
    }
    this.#share = samples === undefined ? { offset: 0, length: Infinity } : processShare(samples, this.#step, processes > 1 ? processId : 0, processes, this.#dropLast);
    this.length = samples === undefined ? undefined : this.#dropLast ? Math.floor(this.#share.length / this.#step) : Math.ceil(this.#share.length / this.#step);
  }

  /** Starts an epoch: the batches in order (a new order each epoch when shuffling). */
  [Symbol.asyncIterator](): AsyncIterator<B> {
    const source = this.#source;
    if (source.kind === 'dataset') return this.#datasetBatches(source.dataset) as AsyncIterator<B>;
    const order = this.#shuffle ? this.#random.permutation(source.samples) : undefined;
    return this.#columnBatches(source.tensors, source.structure, order) as AsyncIterator<B>;
  }

  /** Sizes of this process's batches in its block: full ones of the step, and a short last one unless dropped. */
  *#batchSizes(available: number): Generator<number> {
    for (let start = 0; start < available; start += this.#step) {
      const size = Math.min(this.#step, available - start);
      if (size < this.#step && this.#dropLast) return;
      yield size;
    }
  }

  async *#columnBatches(tensors: readonly tf.Tensor[], structure: BatchStructure, order: Int32Array | undefined): AsyncGenerator<DataLoaderBatch> {
    let start = this.#share.offset;
    for (const size of this.#batchSizes(this.#share.length)) {
      const first = start;
      start += size;
      const rows = tf.tidy(() => {
        const indices = order === undefined ? undefined : tf.tensor1d(order.subarray(first, first + size), 'int32');
        const taken = tensors.map((tensor) => (indices === undefined ? tensor.slice(first, size) : tf.gather(tensor, indices)));
        return this.batchSize === null ? taken.map((row) => tf.squeeze(row, [0])) : taken;
      });
      yield rebuild(structure, rows);
    }
  }

  async *#datasetBatches(dataset: tf.data.Dataset<DataLoaderSample>): AsyncGenerator<DataLoaderBatch> {
    const iterator = await dataset.iterator();
    const { offset, length } = this.#share;
    let structure: BatchStructure | undefined;
    let pending: tf.Tensor[][] = [];
    try {
      for (let index = 0; index < offset + length; index++) {
        const { value, done } = await iterator.next();
        if (done) break;
        const components = elementComponents(value, structure);
        structure ??= components.structure;
        if (index < offset) {
          tf.dispose(components.tensors);
          continue;
        }
        if (this.batchSize === null) {
          yield rebuild(structure, components.tensors);
          continue;
        }
        pending.push(components.tensors);
        if (pending.length === this.#step) {
          const batch = stackSamples(structure, pending);
          pending = [];
          yield batch;
        }
      }
      if (pending.length > 0 && !this.#dropLast && structure !== undefined) {
        const batch = stackSamples(structure, pending);
        pending = [];
        yield batch;
      }
    } finally {
      for (const sample of pending) tf.dispose(sample);
    }
  }
}

/** Checks a dataset of columns (an array or object of tensors sharing their first dimension) and returns its number of samples. */
function checkColumns(dataset: unknown): number {
  const columns = datasetColumns(dataset);
  if (columns === null) {
    throw new TypeError(`DataLoader: the dataset must be an array or an object of tensors sharing their first dimension, or a tf.data.Dataset; got ${describeValue(dataset)}`);
  }
  if (columns.length === 0) throw new RangeError(`DataLoader: the dataset is empty (${Array.isArray(dataset) ? 'an array' : 'an object'} of no tensors)`);
  let samples: number | undefined;
  let first = '';
  for (const { name, value } of columns) {
    if (!(value instanceof tf.Tensor)) throw new TypeError(`DataLoader: ${name} must be a tf.Tensor, got ${describeValue(value)}`);
    if (value.isDisposed) throw new RangeError(`DataLoader: ${name} is a disposed tensor`);
    if (value.rank === 0) throw new RangeError(`DataLoader: ${name} is a scalar; each tensor needs a first (sample) dimension`);
    const count = value.shape[0] as number;
    if (samples !== undefined && count !== samples) {
      throw new RangeError(`DataLoader: all tensors must share their first (sample) dimension; ${first} has ${samples} samples, ${name} has ${count}`);
    }
    if (samples === undefined) first = name;
    samples = count;
  }
  return samples as number;
}

/** Stacks samples into one batch tensor per component, in `structure`, and disposes the samples. */
function stackSamples(structure: BatchStructure, samples: readonly tf.Tensor[][]): DataLoaderBatch {
  const first = samples[0] as tf.Tensor[];
  try {
    const stacked = tf.tidy(() =>
      first.map((_, component) => {
        try {
          return tf.stack(samples.map((sample) => sample[component] as tf.Tensor));
        } catch (error) {
          const reason = error instanceof Error ? error.message : String(error);
          const name = structure.kind === 'object' ? `'${structure.keys[component]}'` : String(component);
          throw new RangeError(`DataLoader: cannot batch component ${name} of the dataset elements: ${reason}`, { cause: error });
        }
      }),
    );
    return rebuild(structure, stacked);
  } finally {
    for (const sample of samples) tf.dispose(sample);
  }
}
