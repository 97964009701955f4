/**
 * The first step of a multi-instance run starts from instance 0's device
 * state: its weights (every replica's) and optimizer state (steps, slots and
 * loss scale) are broadcast to the other instances, which take them in place
 * of their own, so every instance trains the same model whatever the host
 * weights each started with. Each instance keeps its own random generator.
 *
 * Instance 0 sends the layout of its state (names, shapes, dtypes, steps) as
 * JSON, then every tensor's bytes in one buffer; the others rebuild the state
 * from them, so a state of another layout than theirs (a checkpoint only
 * instance 0 loaded) still arrives whole.
 */
import * as tf from '@tensorflow/tfjs';
import type { DeviceState, OptimizerStateSnapshot } from '../executable/device_state.js';
import { deviceStateTensors } from '../executable/device_state.js';
import type { MpiCommunicator } from './mpi_communicator.js';

/** A tensor's shape and dtype. */
interface TensorSpec {
  readonly shape: number[];
  readonly dtype: 'float32' | 'int32' | 'bool';
}

/** A device state without its tensors' values and random generator. */
interface StateLayout {
  readonly lossScale: number;
  readonly iterations: number;
  readonly weights: Array<[string, TensorSpec[]]>;
  readonly optimizerStates: Array<{ groupedParam?: string; replicaGroup: number; step: number; slots: Array<[string, Array<[string, TensorSpec]>]> }>;
}

const spec = (t: tf.Tensor): TensorSpec => ({ shape: [...t.shape], dtype: t.dtype as TensorSpec['dtype'] });
const bytesOf = (s: TensorSpec) => (s.dtype === 'bool' ? 1 : 4) * s.shape.reduce((a, b) => a * b, 1);

/** The layout of `state`; its tensors are {@link deviceStateTensors}'s, in the same order. */
function layoutOf(state: DeviceState<tf.Tensor>): StateLayout {
  return {
    lossScale: state.lossScale,
    iterations: state.iterations,
    weights: [...(state.weights ?? [])].map(([name, values]) => [name, values.map(spec)]),
    optimizerStates: state.optimizerStates.map((record) => ({
      ...(record.groupedParam !== undefined ? { groupedParam: record.groupedParam } : {}),
      replicaGroup: record.replicaGroup,
      step: record.step,
      slots: [...record.slots].map(([param, slots]) => [param, Object.entries(slots).map(([slot, t]) => [slot, spec(t)])]),
    })),
  };
}

/** The state `layout` describes, its tensors read in order from `data`. */
function stateFrom(layout: StateLayout, data: Uint8Array, randomState: DeviceState<tf.Tensor>['randomState']): DeviceState<tf.Tensor> {
  let offset = 0;
  const read = (s: TensorSpec): tf.Tensor => {
    const bytes = data.slice(offset, offset + bytesOf(s));
    offset += bytes.length;
    const values = s.dtype === 'bool' ? bytes : s.dtype === 'int32' ? new Int32Array(bytes.buffer) : new Float32Array(bytes.buffer);
    return tf.tensor(values, s.shape, s.dtype);
  };
  const weights = new Map(layout.weights.map(([name, specs]) => [name, specs.map(read)]));
  const optimizerStates = layout.optimizerStates.map(
    (record): OptimizerStateSnapshot<tf.Tensor> => ({
      ...(record.groupedParam !== undefined ? { groupedParam: record.groupedParam } : {}),
      replicaGroup: record.replicaGroup,
      step: record.step,
      slots: new Map(record.slots.map(([param, slots]) => [param, Object.fromEntries(slots.map(([slot, s]) => [slot, read(s)]))])),
    }),
  );
  return { weights, optimizerStates, lossScale: layout.lossScale, iterations: layout.iterations, randomState };
}

/** What holds a device state: an engine (or its loaded executable) exports and imports it. */
export interface DeviceStateHolder {
  exportState(options: { weights: boolean }): DeviceState<tf.Tensor>;
  importState(state: DeviceState<tf.Tensor>): void;
}

/** Gives every instance instance 0's weights and optimizer state (every instance calls it). */
export async function broadcastDeviceState(loaded: DeviceStateHolder, world: MpiCommunicator): Promise<void> {
  const state = loaded.exportState({ weights: true });
  const tensors = deviceStateTensors(state);
  try {
    const root = world.rank === 0;
    const header = root ? new TextEncoder().encode(JSON.stringify(layoutOf(state))) : new Uint8Array(0);
    const length = await world.broadcast(new Uint8Array(new Uint32Array([header.length]).buffer));
    const sizeOfHeader = new Uint32Array(length.slice().buffer)[0]!;
    const received = await world.broadcast(root ? header : new Uint8Array(sizeOfHeader));
    const layout = JSON.parse(new TextDecoder().decode(received.slice())) as StateLayout;
    const total = [...layout.weights.flatMap(([, specs]) => specs), ...layout.optimizerStates.flatMap((r) => r.slots.flatMap(([, slots]) => slots.map(([, s]) => s)))].reduce(
      (n, s) => n + bytesOf(s),
      0,
    );
    const data = new Uint8Array(new SharedArrayBuffer(total));
    if (root) {
      let offset = 0;
      for (const t of tensors) {
        const values = t.dataSync() as Float32Array | Int32Array | Uint8Array;
        data.set(new Uint8Array(values.buffer, values.byteOffset, values.byteLength), offset);
        offset += values.byteLength;
      }
    }
    await world.broadcast(data);
    if (!root) loaded.importState(stateFrom(layout, data, state.randomState));
  } finally {
    tf.dispose(tensors);
  }
}
