/**
 * Where each kind of tensor lives on the simulated device, from
 * `Options.TensorLocations` (PopTorch's `TensorLocationSettings`, PopART's
 * `TensorLocationSettings`) and the replication factor:
 *
 * - on chip (In-Processor memory) or off chip, in the streaming memory
 *   attached to the IPU, loaded onto the chip when a kernel needs it and
 *   stored back after;
 * - sharded over the replicas (replicated tensor sharding, RTS): each
 *   replica keeps 1/R of the tensor, gathered from the other replicas over
 *   the IPU-Links when the whole is needed;
 * - loaded and stored through the I/O tiles (`numIOTiles`), which overlaps
 *   the transfer with compute on the other tiles, or through the compute
 *   tiles, which stalls them. Without I/O tiles, `useIOTilesToLoad` and
 *   `useIOTilesToStore` go through the compute tiles, with a warning, as
 *   PopART's streaming-memory inserter makes both tile sets Compute when
 *   `numIOTiles` is 0 (willow/src/transforms/streamingmemoryopinserter.cpp).
 *
 * Tensors with fewer elements than `minElementsForOffChip` stay on chip;
 * only tensors with more than `minElementsForReplicatedTensorSharding`
 * elements are sharded. Combinations PopART does not support are refused
 * with the reason.
 */
import { PoptfjsError } from '../common/errors.js';
import { getLogger } from '../common/log.js';
import type { TensorLocationData, TensorLocationsSettings } from '../option_vocabulary/tensor_location_settings.js';

/** Where one kind of tensor lives. */
export interface StorageRule {
  /** In streaming memory, loaded when needed. */
  readonly offChip: boolean;
  /** Sharded over the replicas (weights and optimizer state only). */
  readonly sharded: boolean;
  /** Tensors with fewer elements stay on chip. */
  readonly minElementsForOffChip: number;
  /** Only tensors with more elements are sharded. */
  readonly minElementsForSharding: number;
  /** Loads go through the I/O tiles and overlap compute. */
  readonly loadThroughIoTiles: boolean;
  /** Stores go through the I/O tiles and overlap compute. */
  readonly storeThroughIoTiles: boolean;
}

/** Where every kind of tensor lives, and how many tiles of each IPU do I/O. */
export interface TensorStorage {
  readonly activation: StorageRule;
  readonly weight: StorageRule;
  readonly optimizer: StorageRule;
  readonly accumulator: StorageRule;
  /** Tiles of each IPU reserved for I/O (0: none); the model computes on the others. */
  readonly ioTiles: number;
  /** Replicas a sharded tensor is split over. */
  readonly replicationFactor: number;
}

/** The kinds of tensors a location can be set for. */
export type TensorKind = 'activation' | 'weight' | 'optimizer' | 'accumulator';

const METHOD: Record<TensorKind, string> = {
  activation: 'setActivationLocation',
  weight: 'setWeightLocation',
  optimizer: 'setOptimizerLocation',
  accumulator: 'setAccumulatorLocation',
};

const log = getLogger('devicex');

function storageError(message: string): PoptfjsError {
  return new PoptfjsError(message, { type: 'options' });
}

function rule(kind: TensorKind, data: TensorLocationData, ioTiles: number): StorageRule {
  const where = `Options.TensorLocations.${METHOD[kind]}`;
  const offChip = data.useOnChipStorage === false;
  const sharded = data.useReplicatedTensorSharding === true;
  if (sharded && (kind === 'activation' || kind === 'accumulator')) {
    throw storageError(`${where}: replicated tensor sharding applies to weights and optimizer state, not to ${kind}s; remove useReplicatedTensorSharding`);
  }
  if (sharded && kind === 'weight' && !offChip) {
    throw storageError(
      `${where}: sharded weights live off chip (each replica keeps its shard in streaming memory and gathers the whole weight when it loads it); add useOnChipStorage(false), or shard the optimizer state instead`,
    );
  }
  for (const key of ['useIOTilesToLoad', 'useIOTilesToStore'] as const) {
    if (data[key] === true && ioTiles === 0) {
      log.warn(
        `${where}: ${key} without I/O tiles: the ${kind}s go through the compute tiles, as PopART does when numIOTiles is 0; reserve I/O tiles with Options.TensorLocations.numIOTiles(n) (an even number from 32 to 192) to overlap the transfers`,
      );
    }
  }
  return {
    offChip,
    sharded,
    minElementsForOffChip: data.minElementsForOffChip ?? 0,
    minElementsForSharding: data.minElementsForReplicatedTensorSharding ?? 0,
    loadThroughIoTiles: data.useIOTilesToLoad === true && ioTiles > 0,
    storeThroughIoTiles: data.useIOTilesToStore === true && ioTiles > 0,
  };
}

/** The storage the options ask for; unsupported combinations are errors naming the setting. */
export function tensorStorage(locations: TensorLocationsSettings, replicationFactor: number): TensorStorage {
  const ioTiles = locations.numIOTiles ?? 0;
  return {
    activation: rule('activation', locations.activation, ioTiles),
    weight: rule('weight', locations.weight, ioTiles),
    optimizer: rule('optimizer', locations.optimizer, ioTiles),
    accumulator: rule('accumulator', locations.accumulator, ioTiles),
    ioTiles,
    replicationFactor,
  };
}

/** Everything on chip, nothing sharded, no I/O tiles: the default. */
export const ON_CHIP_STORAGE: TensorStorage = tensorStorage({ activation: {}, weight: {}, optimizer: {}, accumulator: {} }, 1);

/** True if a tensor of `elements` elements of this kind lives off chip. */
export function isOffChip(rule: StorageRule, elements: number): boolean {
  return rule.offChip && elements >= rule.minElementsForOffChip;
}

/** The fraction of a tensor of `elements` elements each replica keeps: 1/R when it is sharded, else 1. */
export function shardFraction(rule: StorageRule, elements: number, replicationFactor: number): number {
  return rule.sharded && replicationFactor > 1 && elements > rule.minElementsForSharding ? 1 / replicationFactor : 1;
}
