/**
 * Checking a device state against the executable it is to be imported
 * into: every weight one the executable has, for every replica, in its dtype
 * and shape; every optimizer slot in the shape of its weight. An error names
 * the first that does not fit.
 */
import type * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../common/errors.js';
import { paramValues } from '../ir/graph.js';
import type { DeviceState } from '../executable/device_state.js';
import type { Executable } from '../executable/executable.js';

/** Throws if `state` does not fit `executable` (see the file's notes). */
export function checkDeviceState(executable: Executable, state: DeviceState<tf.Tensor>): void {
  const replicas = executable.factors.replicationFactor;
  const params = paramValues(executable.graph);
  for (const [name, values] of state.weights ?? []) {
    const param = params.get(name);
    if (!param) throw new PoptfjsError(`the device state has a weight '${name}', which the executable does not have`, { type: 'runtime' });
    if (values.length !== replicas) {
      throw new PoptfjsError(`the device state holds weight '${name}' for ${values.length} replica(s), but the executable runs ${replicas}`, { type: 'runtime' });
    }
    const bad = values.find((t) => t.dtype !== param.dtype || t.shape.length !== param.shape.length || t.shape.some((d, i) => d !== param.shape[i]));
    if (bad) {
      throw new PoptfjsError(
        `the device state holds weight '${name}' as ${bad.dtype}[${bad.shape.join(',')}], but the executable has ${param.dtype}[${param.shape.join(',')}]`,
        {
          type: 'runtime',
        },
      );
    }
  }
  for (const record of state.optimizerStates) {
    for (const [name, slots] of record.slots) {
      const param = params.get(name);
      if (!param) throw new PoptfjsError(`the device state has optimizer state for '${name}', which the executable does not have`, { type: 'runtime' });
      for (const [slot, t] of Object.entries(slots)) {
        if (t.shape.length !== param.shape.length || t.shape.some((d, i) => d !== param.shape[i])) {
          throw new PoptfjsError(
            `the device state holds optimizer slot '${slot}' of '${name}' as ${t.dtype}[${t.shape.join(',')}], but the weight is ${param.dtype}[${param.shape.join(',')}]`,
            {
              type: 'runtime',
            },
          );
        }
      }
    }
  }
}
