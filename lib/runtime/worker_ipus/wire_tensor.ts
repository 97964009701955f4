/**
 * A tensor as it travels between the main thread and a worker IPU: its shape,
 * dtype and a typed array of its elements whose buffer is handed over
 * (transferred, not copied) with the message that carries it.
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../../common/errors.js';
import { engine } from '../../backend/tfjs_internals.js';

/** The element arrays a {@link WireTensor} can hold. */
export type WireData = Float32Array | Int32Array | Uint8Array;

/** A tensor's shape, dtype and elements, ready to post to another thread. */
export interface WireTensor {
  /** The tensor's shape. */
  readonly shape: readonly number[];
  /** Its dtype (one of {@link WIRE_DTYPES}). */
  readonly dtype: 'float32' | 'int32' | 'bool';
  /** Its elements, in a buffer of their own. */
  readonly data: WireData;
}

/** The dtypes that can cross between threads as a {@link WireTensor}. */
export const WIRE_DTYPES: ReadonlySet<string> = new Set(['float32', 'int32', 'bool']);

/**
 * True if reading `t` returns a fresh copy of its elements that nobody else
 * holds: the wasm backend copies out of its heap on every read, the cpu
 * backend hands out its own array.
 */
function readsCopy(t: tf.Tensor): boolean {
  const owner = engine().state.tensorInfo.get(t.dataId)?.backend;
  return owner !== undefined && owner === tf.engine().findBackend('wasm');
}

/** The elements of `t` in a buffer of their own, which may be transferred. */
export function wireTensor(t: tf.Tensor): WireTensor {
  if (!WIRE_DTYPES.has(t.dtype)) {
    throw new PoptfjsError(`a ${t.dtype} tensor cannot be passed to a worker IPU (only ${[...WIRE_DTYPES].join(', ')})`, { type: 'runtime' });
  }
  const read = t.dataSync() as WireData;
  const data = readsCopy(t) && read.byteOffset === 0 && read.byteLength === read.buffer.byteLength ? read : (read.slice() as WireData);
  return { shape: [...t.shape], dtype: t.dtype as WireTensor['dtype'], data };
}

/** A tensor on this thread's backend holding a copy of `w`'s elements (the backend copies them in). */
export function tensorFromWire(w: WireTensor): tf.Tensor {
  return tf.tensor(w.data, [...w.shape], w.dtype);
}

/** The buffers to transfer with a message carrying `tensors` (each buffer once). */
export function transferList(tensors: Iterable<WireTensor | WireData>): ArrayBuffer[] {
  const buffers = new Set<ArrayBuffer>();
  for (const t of tensors) {
    const data = ArrayBuffer.isView(t) ? t : t.data;
    if (data.buffer instanceof ArrayBuffer) buffers.add(data.buffer);
  }
  return [...buffers];
}

/** Bytes of elements in `tensors`. */
export function wireBytes(tensors: Iterable<WireTensor | WireData>): number {
  let bytes = 0;
  for (const t of tensors) bytes += (ArrayBuffer.isView(t) ? t : t.data).byteLength;
  return bytes;
}
