/**
 * `opts.TensorLocations`: where activations, weights, optimizer state and
 * accumulators are stored (PopTorch's `_TensorLocationOptions`).
 */
import { z } from 'zod';
import { type ArgumentRule, checkArgument, instanceRule } from '../option_vocabulary/argument_rules.js';
import type { MutationGuard } from '../option_vocabulary/frozen_options.js';
import { TensorLocationSettings, type TensorLocationsSettings } from '../option_vocabulary/tensor_location_settings.js';

/** The defaults of {@link TensorLocationsSettings}: every choice left to the engine. */
const DEFAULT_TENSOR_LOCATIONS_SETTINGS: TensorLocationsSettings = Object.freeze({
  activation: {},
  weight: {},
  optimizer: {},
  accumulator: {},
});

/** The four kinds of tensors whose location can be set, as keys of {@link TensorLocationsSettings}. */
export const TENSOR_KINDS = ['activation', 'weight', 'optimizer', 'accumulator'] as const;

function copyOf(values: TensorLocationsSettings): TensorLocationsSettings {
  const locations: TensorLocationsSettings = {
    activation: { ...values.activation },
    weight: { ...values.weight },
    optimizer: { ...values.optimizer },
    accumulator: { ...values.accumulator },
  };
  return values.numIOTiles === undefined ? locations : { numIOTiles: values.numIOTiles, ...locations };
}

const ioTilesRule: ArgumentRule<number> = {
  schema: z
    .number()
    .int()
    .min(32)
    .max(192)
    .refine((tiles) => tiles % 2 === 0),
  jsType: 'number',
  expected: 'an even integer from 32 to 192',
};
const locationRule = instanceRule(TensorLocationSettings, 'a TensorLocationSettings');

/**
 * Where each kind of tensor is stored; reach them as `opts.TensorLocations`.
 * Every setter returns the group. The simulated IPU acts on them: off-chip
 * tensors leave In-Processor memory for streaming memory and their loads and
 * stores appear on the timeline; sharded optimizer state (and off-chip
 * weights) take 1/R of their bytes per replica; I/O tiles are taken from the
 * model's tiles and let the transfers that go through them overlap compute.
 * Combinations PopART does not support are refused when the model compiles.
 */
export class TensorLocationsOptions {
  #values: TensorLocationsSettings = DEFAULT_TENSOR_LOCATIONS_SETTINGS;
  readonly #guard: MutationGuard;

  /** @internal `Options` builds its groups; `guard` throws when the options are frozen. */
  constructor(guard: MutationGuard) {
    this.#guard = guard;
  }

  /**
   * Reserves `numTiles` tiles of each IPU (an even number from 32 to 192) for
   * I/O: the model computes on, and fits in, the other tiles; the host
   * transfers of inputs and outputs marked with `ops.setOverlapForInput` /
   * `setOverlapForOutput`, and the streaming transfers set to use the I/O
   * tiles, overlap compute. The I/O tiles hold the marked transfers' buffers.
   */
  numIOTiles(numTiles: number): this {
    const where = this.#check('numIOTiles');
    return this.#set({ numIOTiles: checkArgument(ioTilesRule, numTiles, where) });
  }

  /** Where activations are stored: off chip, the stash kept for the backward pass goes to streaming memory between the passes. */
  setActivationLocation(location: TensorLocationSettings): this {
    return this.#setLocation('setActivationLocation', 'activation', location);
  }

  /** Where weights are stored: off chip, they are loaded for each step that reads them (sharded: each replica keeps 1/R and gathers the rest). */
  setWeightLocation(location: TensorLocationSettings): this {
    return this.#setLocation('setWeightLocation', 'weight', location);
  }

  /** Where optimizer state is stored: off chip, it is loaded and stored around the weight update; sharded, each replica keeps 1/R of it. */
  setOptimizerLocation(location: TensorLocationSettings): this {
    return this.#setLocation('setOptimizerLocation', 'optimizer', location);
  }

  /** Where gradient accumulators are stored: off chip, they are loaded and stored around each backward pass that adds to them. */
  setAccumulatorLocation(location: TensorLocationSettings): this {
    return this.#setLocation('setAccumulatorLocation', 'accumulator', location);
  }

  /** A copy of the current values. */
  get settings(): TensorLocationsSettings {
    return copyOf(this.#values);
  }

  /** @internal Replaces every value; `Options` uses it to copy options. */
  restore(values: TensorLocationsSettings): void {
    this.#values = copyOf(values);
  }

  #setLocation(method: string, kind: (typeof TENSOR_KINDS)[number], location: TensorLocationSettings): this {
    const where = this.#check(method);
    return this.#set({ [kind]: checkArgument(locationRule, location, where).toJSON() });
  }

  #check(method: string): string {
    const where = `Options.TensorLocations.${method}`;
    this.#guard(where);
    return where;
  }

  #set(change: Partial<TensorLocationsSettings>): this {
    this.#values = { ...this.#values, ...change };
    return this;
  }
}
