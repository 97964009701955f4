/**
 * `TensorLocationSettings`: where one kind of tensor (activations, weights,
 * optimizer state, accumulators) is stored, as PopTorch's class of that name.
 */
import { checkArgument, describeValue, flag, nonNegativeInteger } from './argument_rules.js';

/** Tensor location settings as plain data; an absent key leaves the engine's default. */
export interface TensorLocationData {
  /** True: on-chip memory; false: off-chip (streaming) memory. */
  readonly useOnChipStorage?: boolean;
  /** Whether the tensors are sharded across replicas (weights and optimizer state). */
  readonly useReplicatedTensorSharding?: boolean;
  /** Tensors with fewer elements than this are never moved off chip. */
  readonly minElementsForOffChip?: number;
  /** Only tensors with more elements than this are sharded across replicas. */
  readonly minElementsForReplicatedTensorSharding?: number;
  /** Whether the tensors are loaded through the IO tiles. */
  readonly useIOTilesToLoad?: boolean;
  /** Whether sharded tensors are stored through the IO tiles. */
  readonly useIOTilesToStore?: boolean;
}

/** The tensor location options as plain data. */
export interface TensorLocationsSettings {
  /** Tiles of each IPU reserved for I/O; absent: none. */
  readonly numIOTiles?: number;
  /** Where activations are stored. */
  readonly activation: TensorLocationData;
  /** Where weights are stored. */
  readonly weight: TensorLocationData;
  /** Where optimizer state is stored. */
  readonly optimizer: TensorLocationData;
  /** Where gradient accumulators are stored. */
  readonly accumulator: TensorLocationData;
}

/** The names of the settings, which are also the names of the methods that set them. */
export const TENSOR_LOCATION_KEYS = [
  'useOnChipStorage',
  'useReplicatedTensorSharding',
  'minElementsForOffChip',
  'minElementsForReplicatedTensorSharding',
  'useIOTilesToLoad',
  'useIOTilesToStore',
] as const satisfies readonly (keyof TensorLocationData)[];

/**
 * Where a kind of tensor is stored. Build one, chain its setters, and pass it
 * to one of `opts.TensorLocations.set...Location`:
 * `opts.TensorLocations.setWeightLocation(new TensorLocationSettings().useOnChipStorage(false))`.
 * The simulated IPU's memory plan and timeline follow them (see `opts.TensorLocations`).
 */
export class TensorLocationSettings {
  #values: TensorLocationData = {};

  /** Settings that leave every choice to the engine; `data` pre-fills them (checked like the setters). */
  constructor(data: TensorLocationData = {}) {
    if (typeof data !== 'object' || data === null || Array.isArray(data)) {
      throw new TypeError(`TensorLocationSettings: expected an object of settings, got ${describeValue(data)}`);
    }
    for (const key of TENSOR_LOCATION_KEYS) {
      const value = data[key];
      if (value !== undefined) (this[key] as (value: unknown) => this).call(this, value);
    }
  }

  /** Tensors with fewer than `minElements` elements stay on chip. Returns the settings. */
  minElementsForOffChip(minElements: number): this {
    return this.#set('minElementsForOffChip', checkArgument(nonNegativeInteger, minElements, 'TensorLocationSettings.minElementsForOffChip'));
  }

  /** Only tensors with more than `minElements` elements are sharded across replicas. Returns the settings. */
  minElementsForReplicatedTensorSharding(minElements: number): this {
    const where = 'TensorLocationSettings.minElementsForReplicatedTensorSharding';
    return this.#set('minElementsForReplicatedTensorSharding', checkArgument(nonNegativeInteger, minElements, where));
  }

  /** True: store the tensors on chip; false: in streaming memory. Returns the settings. */
  useOnChipStorage(use = true): this {
    return this.#set('useOnChipStorage', checkArgument(flag, use, 'TensorLocationSettings.useOnChipStorage'));
  }

  /** Shard the tensors across replicas (weights and optimizer state). Returns the settings. */
  useReplicatedTensorSharding(use = true): this {
    return this.#set('useReplicatedTensorSharding', checkArgument(flag, use, 'TensorLocationSettings.useReplicatedTensorSharding'));
  }

  /** Load the tensors through the IO tiles (true) or the compute tiles (false). Returns the settings. */
  useIOTilesToLoad(use = true): this {
    return this.#set('useIOTilesToLoad', checkArgument(flag, use, 'TensorLocationSettings.useIOTilesToLoad'));
  }

  /** Store sharded tensors through the IO tiles (true) or the compute tiles (false). Returns the settings. */
  useIOTilesToStore(use = true): this {
    return this.#set('useIOTilesToStore', checkArgument(flag, use, 'TensorLocationSettings.useIOTilesToStore'));
  }

  /** The settings as plain data (only the keys that were set). */
  toJSON(): TensorLocationData {
    return { ...this.#values };
  }

  #set<K extends keyof TensorLocationData>(key: K, value: TensorLocationData[K]): this {
    this.#values = { ...this.#values, [key]: value };
    return this;
  }
}
