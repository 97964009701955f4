/**
 * Remote buffers: the streaming memory that `Options.TensorLocations` keeps
 * tensors in off chip, as Poplar's remote buffers, read and written with
 * `Engine.copyFromRemoteBuffer` / `copyToRemoteBuffer`. Each off-chip weight
 * has a buffer `weights/<parameter>`, and each slot of the optimizer state of
 * an off-chip trained weight a buffer `optimizerState/<slot>/<parameter>`;
 * each buffer holds one repeat (index 0) per replica. A buffer of a tensor
 * sharded across replicas (replicated tensor sharding) holds each replica's
 * shard: the flattened tensor, padded with zeros to a multiple of the
 * replicas, split into equal parts, part `r` on replica `r`; writing a
 * replica's shard changes the tensor every replica gathers.
 *
 * Off-chip activations and gradient accumulators have no remote buffer,
 * because the runtime keeps no value of theirs between program runs, which
 * is the only time a buffer can be read or written: an activation lives for
 * one micro-batch of the step (the stash the backward pass reads is freed
 * after that micro-batch's last unit), and an accumulator for one device
 * iteration (the gradients summed over the gradient-accumulation steps are
 * consumed by the weight update, which leaves it at zero, as PopART zeroes
 * its accumulators after each update). The memory plan counts both in
 * streaming memory while the step runs (`IpuMemoryUse.streaming`), and the
 * timeline moves them (`executable.streamingTransfers`); a buffer of theirs
 * would only ever hold nothing the next run reads.
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../common/errors.js';
import { paramValues, sizeOf } from '../ir/graph.js';
import type { Executable, RemoteBufferSpec } from '../executable/executable.js';
import type { LoadedExecutable } from '../runtime/loaded_executable.js';

/** The elements of one repeat of `spec` on one replica. */
function repeatElements(executable: Executable, spec: RemoteBufferSpec): number {
  const elements = sizeOf(paramValues(executable.graph).get(spec.param)!.shape);
  return spec.sharded ? Math.ceil(elements / executable.factors.replicationFactor) : elements;
}

/** The remote buffers of an engine, over its loaded device state. */
export class RemoteBuffers {
  private readonly byHandle: ReadonlyMap<string, RemoteBufferSpec>;

  constructor(private readonly executable: Executable) {
    this.byHandle = new Map((executable.remoteBuffers ?? []).map((b) => [b.handle, b]));
  }

  /** The buffer `handle`, checked with the repeat and replica indices and the user buffer; `what` names the caller. */
  private checked(handle: string, buffer: Float32Array, repeatIndex: number, replicationIndex: number, what: string): RemoteBufferSpec {
    const spec = this.byHandle.get(handle);
    if (!spec) {
      const handles = [...this.byHandle.keys()];
      throw new PoptfjsError(
        `${what}: the engine has no remote buffer '${handle}'; ${handles.length ? `its remote buffers are ${handles.join(', ')}` : 'it keeps nothing off chip (Options.TensorLocations)'}`,
        { type: 'engine' },
      );
    }
    if (repeatIndex !== 0) throw new PoptfjsError(`${what}('${handle}'): repeat ${repeatIndex} is out of range; the buffer has 1 repeat (index 0)`, { type: 'engine' });
    const replicas = this.executable.factors.replicationFactor;
    if (!(Number.isInteger(replicationIndex) && replicationIndex >= 0 && replicationIndex < replicas)) {
      throw new PoptfjsError(`${what}('${handle}'): replica ${replicationIndex} is out of range; the engine runs ${replicas} replica(s)`, { type: 'engine' });
    }
    if (!(buffer instanceof Float32Array)) throw new PoptfjsError(`${what}('${handle}'): give a Float32Array`, { type: 'engine' });
    const elements = repeatElements(this.executable, spec);
    if (buffer.length !== elements) {
      throw new PoptfjsError(
        `${what}('${handle}'): the buffer holds ${buffer.length} elements, but a repeat holds ${elements}${spec.sharded ? " (one replica's shard)" : ''}`,
        {
          type: 'engine',
        },
      );
    }
    return spec;
  }

  /** The full value behind `spec` on `replica` (the caller owns it). */
  private value(loaded: LoadedExecutable, spec: RemoteBufferSpec, replica: number): Float32Array {
    if (spec.kind === 'weight') {
      const weight = loaded.weight(spec.param, replica);
      if (!weight) throw new PoptfjsError(`weight '${spec.param}' has no value on the device yet; run weightsFromHost first`, { type: 'engine' });
      return Float32Array.from(weight.dataSync() as Float32Array);
    }
    for (const record of Object.values(loaded.readOptimizerState().states)) {
      const slot = record.slots[spec.param]?.[spec.slot!];
      if (slot) return Float32Array.from(slot.data);
    }
    return new Float32Array(sizeOf(paramValues(this.executable.graph).get(spec.param)!.shape));
  }

  /** Copies repeat `repeatIndex` of buffer `handle` on replica `replicationIndex` into `buffer`. */
  copyFrom(loaded: LoadedExecutable, handle: string, buffer: Float32Array, repeatIndex: number, replicationIndex: number): void {
    const spec = this.checked(handle, buffer, repeatIndex, replicationIndex, 'copyFromRemoteBuffer');
    const value = this.value(loaded, spec, replicationIndex);
    const start = spec.sharded ? replicationIndex * buffer.length : 0;
    buffer.fill(0);
    buffer.set(value.subarray(start, Math.min(value.length, start + buffer.length)));
  }

  /** Copies `buffer` into repeat `repeatIndex` of buffer `handle` on replica `replicationIndex`. */
  copyTo(loaded: LoadedExecutable, buffer: Float32Array, handle: string, repeatIndex: number, replicationIndex: number): void {
    const spec = this.checked(handle, buffer, repeatIndex, replicationIndex, 'copyToRemoteBuffer');
    const value = this.value(loaded, spec, replicationIndex);
    const start = spec.sharded ? replicationIndex * buffer.length : 0;
    value.set(buffer.subarray(0, Math.max(0, Math.min(buffer.length, value.length - start))), start);
    const shape = [...paramValues(this.executable.graph).get(spec.param)!.shape];
    if (spec.kind === 'weight') {
      // A shard changes the tensor every replica gathers; an unsharded copy is the replica's own.
      const replicas = spec.sharded ? Array.from({ length: this.executable.factors.replicationFactor }, (_, r) => r) : [replicationIndex];
      for (const r of replicas) loaded.setWeight(spec.param, r, tf.tensor(value, shape, 'float32'));
      return;
    }
    const state = loaded.readOptimizerState();
    const states = Object.fromEntries(
      Object.entries(state.states).map(([key, record]) => {
        const slots = record.slots[spec.param];
        if (!slots?.[spec.slot!]) return [key, record];
        return [key, { ...record, slots: { ...record.slots, [spec.param]: { ...slots, [spec.slot!]: { shape, data: value } } } }];
      }),
    );
    loaded.writeOptimizerState({ ...state, states });
  }
}
