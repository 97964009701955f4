/**
 * The optimizer state a device holds, generic over optimizers: a step count
 * and named slot tensors per parameter (momentum, moments, ...), and its
 * plain-data form for state dicts and checkpoints.
 *
 * A device keeps one state for the parameters that are not split across
 * replica groups (key `''`) and one per group of each split parameter
 * (key `name#group`).
 */
import * as tf from '@tensorflow/tfjs';

/** Per-parameter optimizer state tensors (momentum, moments, ...), by slot name. */
export type ParameterState = Record<string, tf.Tensor>;

/** The optimizer state held on the device: per parameter slots and the step count. */
export interface OptimizerState {
  step: number;
  slots: Map<string, ParameterState>;
}

/** A tensor as plain data: its shape and float32 values. */
export interface TensorData {
  readonly shape: readonly number[];
  readonly data: Float32Array;
}

/** An {@link OptimizerState} as plain data: slots by parameter name, then by slot name. */
export interface OptimizerStateRecord {
  readonly step: number;
  readonly slots: Readonly<Record<string, Readonly<Record<string, TensorData>>>>;
}

/** The optimizer state of a device as plain data. */
export interface OptimizerStateData {
  /** The loss scale in use (it moves under automatic loss scaling). */
  readonly lossScale: number;
  /** The states by key: `''` for unsplit parameters, `name#group` for a group of a split parameter. */
  readonly states: Readonly<Record<string, OptimizerStateRecord>>;
}

/**
 * @internal Where the state of an optimizer lives while an executor trains
 * with it: the executor's device. The optimizer reads and writes it there
 * for `stateDict` and `loadStateDict`.
 */
export interface OptimizerStateStore {
  /** A host copy of the device's optimizer state. */
  readOptimizerState(): OptimizerStateData;
  /** Replaces the device's optimizer state (checked against the device's weights). */
  writeOptimizerState(data: OptimizerStateData): void;
}

/** A fresh state: step 0, no slots. */
export function emptyOptimizerState(): OptimizerState {
  return { step: 0, slots: new Map() };
}

/** A host copy of `state`. */
export function optimizerStateRecord(state: OptimizerState): OptimizerStateRecord {
  const slots: Record<string, Record<string, TensorData>> = {};
  for (const [param, paramSlots] of state.slots) {
    slots[param] = Object.fromEntries(Object.entries(paramSlots).map(([slot, t]) => [slot, { shape: [...t.shape], data: Float32Array.from(t.dataSync() as Float32Array) }]));
  }
  return { step: state.step, slots };
}

/** Device tensors for a host copy (the caller owns them). */
export function optimizerStateFromRecord(record: OptimizerStateRecord): OptimizerState {
  const slots = new Map<string, ParameterState>();
  for (const [param, paramSlots] of Object.entries(record.slots)) {
    slots.set(param, Object.fromEntries(Object.entries(paramSlots).map(([slot, d]) => [slot, tf.tensor(d.data, [...d.shape], 'float32')])));
  }
  return { step: record.step, slots };
}

/** Frees the tensors of `state`. */
export function disposeOptimizerState(state: OptimizerState): void {
  for (const slots of state.slots.values()) tf.dispose(Object.values(slots));
  state.slots.clear();
}
