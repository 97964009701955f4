/**
 * The data streams of an engine, as Poplar's: each input of the step is a
 * host-write stream (`+`) and each output, the loss and each anchor a
 * host-read stream (`-`); the weights have a host-write stream each, which
 * `weightsFromHost` reads, and a host-read stream each, which
 * `weightsToHost` writes. One transfer moves one micro-batch of an input or
 * output (one micro-step's value of the loss or an anchor), or one weight.
 *
 * A stream is connected to a buffer or to callbacks. A buffer is circular, as
 * Poplar's `connectStream(handle, begin, end)`: each transfer takes the next
 * transfer's worth of elements and wraps at its end, so a buffer of exactly
 * one transfer is Poplar's fixed location (`connectStream(handle, p)`), and a
 * buffer of all the micro-batches of one run is read anew by every run. A
 * callback is called with a buffer of one transfer to fill (host-write) or
 * read (host-read); one connected with a replica index serves that replica's
 * transfers only (Poplar's replicated streams). The device waits at a host
 * sync while a callback runs: one that keeps it waiting longer than the
 * runtime option `target.hostSyncTimeout` fails the run.
 */
import type { DataType } from '@tensorflow/tfjs';
import { PoplarRuntimeError, PoptfjsError } from '../common/errors.js';
import { paramValues, sizeOf } from '../ir/graph.js';
import type { Executable } from '../executable/executable.js';

/** A host buffer of a stream or tensor: `Float32Array` for float32 (and float16) data, `Int32Array` for int32, `Uint8Array` for bool. */
export type HostBuffer = Float32Array | Int32Array | Uint8Array;

/** A stream callback: called with a buffer of one transfer, to fill (host-write streams) or read (host-read streams) during the call. */
export type StreamCallback = (buffer: HostBuffer) => void;

/** What a stream carries and which program moves it. */
export type StreamRole = 'input' | 'output' | 'loss' | 'anchor' | 'weightFromHost' | 'weightToHost';

/** A stream of an engine. */
export interface StreamInfo {
  readonly handle: string;
  /** `host-write` (`+` in `listStreams`): the host writes, the device reads; `host-read` (`-`): the device writes. */
  readonly direction: 'host-write' | 'host-read';
  readonly role: StreamRole;
  /** The shape of one transfer. */
  readonly shape: readonly number[];
  readonly dtype: DataType;
  /** The input, output or anchor position, or the parameter's name. */
  readonly of: number | string;
}

/** The streams of `executable`; `hostShape(param)` gives the host shape of a weight (stacked slices for one split across replica groups). */
export function executableStreams(executable: Executable, hostShape: (param: string) => readonly number[]): StreamInfo[] {
  const { graph, outputCount } = executable;
  const valueShape = (id: number) => graph.values[id]!.shape;
  const streams: StreamInfo[] = executable.inputSignature.map((s, i) => ({
    handle: `input${i}`,
    direction: 'host-write',
    role: 'input',
    shape: s.shape,
    dtype: s.dtype,
    of: i,
  }));
  graph.roles.outputs.slice(0, outputCount).forEach((id, i) => {
    streams.push({ handle: `output${i}`, direction: 'host-read', role: 'output', shape: valueShape(id), dtype: graph.values[id]!.dtype, of: i });
  });
  if (executable.kind === 'training' && graph.roles.loss !== undefined) {
    streams.push({ handle: 'loss', direction: 'host-read', role: 'loss', shape: valueShape(graph.roles.loss), dtype: 'float32', of: 0 });
  }
  (executable.anchors ?? []).forEach((a, i) => {
    const id = graph.roles.outputs[outputCount + i]!;
    streams.push({ handle: `anchor/${a.name}`, direction: 'host-read', role: 'anchor', shape: valueShape(id), dtype: graph.values[id]!.dtype, of: i });
  });
  const programs = new Set(executable.programs.map((p) => p.name));
  for (const [name, value] of paramValues(graph)) {
    const shape = hostShape(name);
    if (programs.has('weightsFromHost'))
      streams.push({ handle: `weightsFromHost/${name}`, direction: 'host-write', role: 'weightFromHost', shape, dtype: value.dtype, of: name });
    if (programs.has('weightsToHost')) streams.push({ handle: `weightsToHost/${name}`, direction: 'host-read', role: 'weightToHost', shape, dtype: value.dtype, of: name });
  }
  return streams;
}

/** The typed array a buffer of `dtype` must be. */
export function bufferTypeOf(dtype: DataType): { readonly name: string; readonly make: (n: number) => HostBuffer; readonly accepts: (b: unknown) => boolean } {
  switch (dtype) {
    case 'int32':
      return { name: 'Int32Array', make: (n) => new Int32Array(n), accepts: (b) => b instanceof Int32Array };
    case 'bool':
      return { name: 'Uint8Array', make: (n) => new Uint8Array(n), accepts: (b) => b instanceof Uint8Array };
    default:
      return { name: 'Float32Array', make: (n) => new Float32Array(n), accepts: (b) => b instanceof Float32Array };
  }
}

/** What a stream is connected to. */
type Connection =
  | { readonly kind: 'buffer'; readonly buffer: HostBuffer; position: number }
  | { readonly kind: 'callbacks'; readonly callbacks: Map<number | 'all', StreamCallback> };

/** The streams of an engine and what each is connected to. */
export class StreamConnections {
  private readonly byHandle: ReadonlyMap<string, StreamInfo>;
  private readonly connections = new Map<string, Connection>();
  /** Seconds the device waits at a host sync for a callback before the run fails (the runtime option `target.hostSyncTimeout`); 0 for no limit. */
  hostSyncTimeout = 0;

  constructor(readonly streams: readonly StreamInfo[]) {
    this.byHandle = new Map(streams.map((s) => [s.handle, s]));
  }

  /** The stream `handle`; an error naming the streams there are. */
  stream(handle: string, what: string): StreamInfo {
    const stream = this.byHandle.get(handle);
    if (!stream) throw new PoptfjsError(`${what}: the engine has no stream '${handle}'; its streams are ${this.streams.map((s) => s.handle).join(', ')}`, { type: 'engine' });
    return stream;
  }

  /** True if `handle` is connected. */
  isConnected(handle: string): boolean {
    return this.connections.has(handle);
  }

  /**
   * Connects `handle` to a circular buffer (see the file's notes): a typed
   * array of the stream's dtype holding a whole number of transfers.
   */
  connectBuffer(handle: string, buffer: HostBuffer): void {
    const stream = this.stream(handle, 'connectStream');
    const type = bufferTypeOf(stream.dtype);
    if (!type.accepts(buffer)) throw new PoptfjsError(`connectStream('${handle}'): the stream carries ${stream.dtype}; give a ${type.name}`, { type: 'engine' });
    const transfer = sizeOf(stream.shape);
    if (buffer.length === 0 || buffer.length % transfer !== 0) {
      throw new PoptfjsError(
        `connectStream('${handle}'): a buffer of ${buffer.length} elements does not hold a whole number of transfers of ${transfer} ([${stream.shape.join(', ')}])`,
        { type: 'engine' },
      );
    }
    this.connections.set(handle, { kind: 'buffer', buffer, position: 0 });
  }

  /** Connects `handle` (or its replica `index`) to a callback; callbacks for some replicas may sit beside one for all. */
  connectCallback(handle: string, index: number | undefined, callback: StreamCallback): void {
    this.stream(handle, 'connectStreamToCallback');
    if (typeof callback !== 'function') throw new PoptfjsError(`connectStreamToCallback('${handle}'): the callback is ${typeof callback}, not a function`, { type: 'engine' });
    if (index !== undefined && !(Number.isInteger(index) && index >= 0)) {
      throw new PoptfjsError(`connectStreamToCallback('${handle}'): the replica index is ${index}; expected a non-negative integer`, { type: 'engine' });
    }
    const existing = this.connections.get(handle);
    const callbacks = existing?.kind === 'callbacks' ? existing.callbacks : new Map<number | 'all', StreamCallback>();
    callbacks.set(index ?? 'all', callback);
    this.connections.set(handle, { kind: 'callbacks', callbacks });
  }

  /**
   * The data of `transfers` transfers of host-write stream `handle`, in
   * order; `replicaOf(k)` is the replica index of transfer `k`.
   */
  read(handle: string, transfers: number, replicaOf: (k: number) => number): HostBuffer {
    const stream = this.stream(handle, 'run');
    const size = sizeOf(stream.shape);
    const data = bufferTypeOf(stream.dtype).make(size * transfers);
    for (let k = 0; k < transfers; k++) {
      const part = data.subarray(k * size, (k + 1) * size);
      this.transfer(stream, part, replicaOf(k), (source) => part.set(source));
    }
    return data;
  }

  /** Writes `data` (a whole number of transfers) to host-read stream `handle`; `replicaOf(k)` is the replica index of transfer `k`. */
  write(handle: string, data: HostBuffer, replicaOf: (k: number) => number): void {
    const stream = this.stream(handle, 'run');
    const size = sizeOf(stream.shape);
    for (let k = 0; k * size < data.length; k++) {
      const part = data.subarray(k * size, (k + 1) * size);
      this.transfer(stream, part, replicaOf(k), (target) => target.set(part));
    }
  }

  /** One transfer: through the stream's callback (given a buffer holding `part`), or from or into the next slot of its buffer. */
  private transfer(stream: StreamInfo, part: HostBuffer, replica: number, move: (slot: HostBuffer) => void): void {
    const connection = this.connections.get(stream.handle);
    const sign = stream.direction === 'host-write' ? '+' : '-';
    if (!connection) {
      throw new PoptfjsError(`stream '${stream.handle}' (${sign}) is not connected; connect it with connectStream or connectStreamToCallback before running`, {
        type: 'engine',
      });
    }
    if (connection.kind === 'callbacks') {
      const callback = connection.callbacks.get(replica) ?? connection.callbacks.get('all');
      if (!callback) {
        throw new PoptfjsError(`stream '${stream.handle}' has no callback for replica ${replica} (connected: ${[...connection.callbacks.keys()].join(', ')})`, {
          type: 'engine',
        });
      }
      const started = performance.now();
      callback(part);
      const waited = (performance.now() - started) / 1000;
      if (this.hostSyncTimeout > 0 && waited > this.hostSyncTimeout) {
        throw new PoplarRuntimeError(
          `run: the device waited ${waited.toFixed(2)} s at a host sync for the callback of stream '${stream.handle}', longer than target.hostSyncTimeout (${this.hostSyncTimeout} s)`,
        );
      }
      return;
    }
    const slot = connection.buffer.subarray(connection.position, connection.position + part.length);
    connection.position = (connection.position + part.length) % connection.buffer.length;
    move(slot);
  }
}
