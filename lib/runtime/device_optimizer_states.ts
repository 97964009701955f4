/**
 * The optimizer state a loaded executable holds on its device: one state
 * for all the parameters not split across replica groups (key `''`), and
 * one per replica group of each split parameter (key `name#group`); read and
 * written as plain data (checked against the device's weights), and taken
 * out and put back as tensors with the device state.
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../common/errors.js';
import {
  disposeOptimizerState,
  emptyOptimizerState,
  optimizerStateFromRecord,
  optimizerStateRecord,
  type OptimizerState,
  type OptimizerStateRecord,
} from '../../optim/optimizer_state.js';
import type { OptimizerStateSnapshot } from '../executable/device_state.js';
import type { Executable } from '../executable/executable.js';
import type { ReplicaWeights } from './replica_weights.js';

/** The optimizer states of a device, by key. */
export class DeviceOptimizerStates {
  private readonly states = new Map<string, OptimizerState>();

  constructor(
    private readonly executable: Executable,
    private readonly weights: ReplicaWeights,
  ) {}

  /** The state of `key`, empty (step 0, no slots) until the first update. */
  of(key: string): OptimizerState {
    let state = this.states.get(key);
    if (!state) this.states.set(key, (state = emptyOptimizerState()));
    return state;
  }

  /** A host copy of every state, by key. */
  records(): Record<string, OptimizerStateRecord> {
    const records: Record<string, OptimizerStateRecord> = {};
    for (const [key, state] of this.states) records[key] = optimizerStateRecord(state);
    return records;
  }

  /**
   * Replaces every state with `records`: keys are `''` (unsplit parameters)
   * or `name#group` (a replica group of a split parameter); each slot must
   * have the shape of its parameter's value on the device. Nothing changes
   * when one does not fit.
   */
  replace(records: Readonly<Record<string, OptimizerStateRecord>>): void {
    for (const [key, record] of Object.entries(records)) this.checkRecord(key, record);
    this.reset();
    for (const [key, record] of Object.entries(records)) this.states.set(key, optimizerStateFromRecord(record));
  }

  private checkRecord(key: string, record: OptimizerStateRecord): void {
    const hash = key.lastIndexOf('#');
    const grouped = key === '' ? undefined : key.slice(0, hash);
    const group = key === '' ? 0 : Number(key.slice(hash + 1));
    const fail = (why: string) => new PoptfjsError(`optimizer state '${key}': ${why}`, { type: 'optimizer' });
    if (grouped !== undefined && (hash < 0 || !(grouped in this.executable.replicaGroupings) || !(group >= 0 && group < this.weights.groups(grouped).length))) {
      throw fail(`not a state of this device; keys are '' and '<parameter split across replica groups>#<group>'`);
    }
    for (const [param, slots] of Object.entries(record.slots)) {
      if (grouped !== undefined ? param !== grouped : param in this.executable.replicaGroupings) {
        throw fail(`holds parameter '${param}', which belongs to ${param in this.executable.replicaGroupings ? `'${param}#<group>'` : "''"}`);
      }
      const weight = this.weights.of(this.weights.groups(param)[group]![0]!).get(param);
      if (!weight) throw fail(`holds parameter '${param}', which the model does not have`);
      for (const [slot, t] of Object.entries(slots)) {
        if (t.shape.length !== weight.rank || t.shape.some((d, i) => d !== weight.shape[i])) {
          throw fail(`slot '${slot}' of parameter '${param}' has shape [${t.shape.join(',')}], but the parameter has shape [${weight.shape.join(',')}] on the device`);
        }
      }
    }
  }

  /** Copies of every state as device-state snapshots (the caller owns their tensors). */
  snapshots(): OptimizerStateSnapshot<tf.Tensor>[] {
    return [...this.states].map(([key, state]): OptimizerStateSnapshot<tf.Tensor> => {
      const split = key.lastIndexOf('#');
      const slots = new Map([...state.slots].map(([name, named]) => [name, Object.fromEntries(Object.entries(named).map(([slot, t]) => [slot, tf.clone(t)]))]));
      return key === ''
        ? { replicaGroup: 0, step: state.step, slots }
        : { groupedParam: key.slice(0, split), replicaGroup: Number(key.slice(split + 1)), step: state.step, slots };
    });
  }

  /** Replaces every state with `snapshots` (already checked), whose tensors are owned from now on. */
  restore(snapshots: readonly OptimizerStateSnapshot<tf.Tensor>[]): void {
    this.reset();
    for (const record of snapshots) {
      const key = record.groupedParam === undefined ? '' : `${record.groupedParam}#${record.replicaGroup}`;
      this.states.set(key, { step: record.step, slots: new Map([...record.slots].map(([name, slots]) => [name, { ...slots }])) });
    }
  }

  /** Frees every state; the next update starts afresh. */
  reset(): void {
    for (const state of this.states.values()) disposeOptimizerState(state);
    this.states.clear();
  }
}
