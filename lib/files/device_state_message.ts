/**
 * A {@link DeviceState} as a protobuf `DeviceState` message, and back. The
 * replicas of a parameter usually hold the same value; each distinct value is
 * stored once and every replica points at its value.
 */
import { PoptfjsError } from '../common/errors.js';
import type { DeviceState, OptimizerStateSnapshot } from '../executable/device_state.js';
import type { DeviceStateMessage, NamedTensorMessage, ReplicaValuesMessage } from '../proto/executable_proto.js';
import type { RandomState } from '../executable/random_source.js';
import { nameRecord } from '../common/name_record.js';
import { sameTensorData, tensorData, tensorMessage, type TensorData } from '../proto/tensor_bytes.js';

function replicaValues(param: string, values: readonly TensorData[]): ReplicaValuesMessage {
  const distinct: TensorData[] = [];
  const replicaIndex = values.map((value) => {
    const known = distinct.findIndex((d) => sameTensorData(d, value));
    if (known >= 0) return known;
    distinct.push(value);
    return distinct.length - 1;
  });
  return { param, values: distinct.map(tensorMessage), replica_values: replicaIndex };
}

/** The `DeviceState` message of a state. */
export function deviceStateMessage(state: DeviceState<TensorData>): DeviceStateMessage {
  return {
    weights: [...(state.weights ?? new Map<string, readonly TensorData[]>())].map(([param, values]) => replicaValues(param, values)),
    optimizer_states: state.optimizerStates.map((record) => ({
      ...(record.groupedParam !== undefined ? { grouped_param: record.groupedParam } : {}),
      replica_group: record.replicaGroup,
      step: record.step,
      parameters: [...record.slots].map(([param, slots]) => ({
        param,
        slots: Object.entries(slots).map(([name, t]): NamedTensorMessage => ({ name, tensor: tensorMessage(t) })),
      })),
    })),
    loss_scale: state.lossScale,
    random_state: [...state.randomState],
    iterations: state.iterations,
  };
}

/** A state from its message; `where` names the file in errors. */
export function deviceStateFromMessage(message: DeviceStateMessage, where: string): DeviceState<TensorData> {
  const fail = (what: string) => new PoptfjsError(`${where}: ${what}`, { type: 'file' });
  const weights = new Map<string, TensorData[]>();
  for (const w of message.weights) {
    const values = w.values.map((v, i) => tensorData(v, `${where} weight '${w.param}' value ${i}`));
    weights.set(
      w.param,
      w.replica_values.map((index, replica) => {
        const value = values[index];
        if (!value) throw fail(`replica ${replica} of weight '${w.param}' refers to value ${index}, but ${values.length} are stored`);
        return value;
      }),
    );
  }
  const optimizerStates = message.optimizer_states.map((record): OptimizerStateSnapshot<TensorData> => {
    const slots = new Map<string, Record<string, TensorData>>();
    for (const p of record.parameters) {
      const named = nameRecord<TensorData>();
      for (const slot of p.slots) {
        if (!slot.tensor) throw fail(`optimizer slot '${slot.name}' of '${p.param}' has no tensor`);
        named[slot.name] = tensorData(slot.tensor, `${where} optimizer slot '${slot.name}' of '${p.param}'`);
      }
      slots.set(p.param, named);
    }
    return { ...(record.grouped_param !== undefined ? { groupedParam: record.grouped_param } : {}), replicaGroup: record.replica_group, step: record.step, slots };
  });
  if (message.random_state.length !== 4 || message.random_state.every((w) => w === 0)) throw fail('the random generator state is invalid');
  return {
    ...(weights.size > 0 ? { weights } : {}),
    optimizerStates,
    lossScale: message.loss_scale,
    randomState: message.random_state as RandomState,
    iterations: message.iterations,
  };
}
