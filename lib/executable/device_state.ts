/**
 * The state an executable builds up on the device while it trains: the
 * weights of every replica, the optimizer state, the loss scale, the random
 * generator and the iteration count. `LoadedExecutable` exports and imports
 * it (with tfjs tensors); files store it (with {@link TensorData}).
 *
 * Optimizer state is kept generic: a step count and named slot tensors per
 * parameter, whatever the optimizer, for the state shared by every parameter
 * not split across replica groups, and for each replica group of each split
 * parameter.
 */
import type { RandomState } from './random_source.js';

/** One optimizer state, with tensors of type `T`. */
export interface OptimizerStateSnapshot<T> {
  /** The parameter split across replica groups this state belongs to; absent for the shared state. */
  readonly groupedParam?: string;
  /** The replica group of `groupedParam` (0 for the shared state). */
  readonly replicaGroup: number;
  /** Optimizer steps taken. */
  readonly step: number;
  /** Slot tensors (momentum, moments, ...) by parameter name, then slot name. */
  readonly slots: ReadonlyMap<string, Readonly<Record<string, T>>>;
}

/** The device state of an executable, with tensors of type `T`. */
export interface DeviceState<T> {
  /** Each parameter's value on every replica, by parameter name; absent when not exported. */
  readonly weights?: ReadonlyMap<string, readonly T[]>;
  readonly optimizerStates: readonly OptimizerStateSnapshot<T>[];
  /** The loss scale gradients are computed with. */
  readonly lossScale: number;
  /** The state of the device's random generator. */
  readonly randomState: RandomState;
  /** Device iterations run so far. */
  readonly iterations: number;
}

/** The state with every tensor mapped through `f` and every parameter name through `rename`. */
export function mapDeviceState<T, U>(state: DeviceState<T>, f: (t: T) => U, rename: (name: string) => string = (n) => n): DeviceState<U> {
  const mapSlots = (slots: Readonly<Record<string, T>>) => Object.fromEntries(Object.entries(slots).map(([k, v]) => [k, f(v)]));
  return {
    ...(state.weights ? { weights: new Map([...state.weights].map(([name, values]) => [rename(name), values.map(f)])) } : {}),
    optimizerStates: state.optimizerStates.map((record) => ({
      ...(record.groupedParam !== undefined ? { groupedParam: rename(record.groupedParam) } : {}),
      replicaGroup: record.replicaGroup,
      step: record.step,
      slots: new Map([...record.slots].map(([name, slots]) => [rename(name), mapSlots(slots)])),
    })),
    lossScale: state.lossScale,
    randomState: [...state.randomState] as RandomState,
    iterations: state.iterations,
  };
}

/** Every tensor of a state, to dispose of them. */
export function deviceStateTensors<T>(state: DeviceState<T>): T[] {
  const out: T[] = [];
  for (const values of state.weights?.values() ?? []) out.push(...values);
  for (const record of state.optimizerStates) for (const slots of record.slots.values()) out.push(...Object.values(slots));
  return out;
}
