/**
 * The lowered variables of a compiled graph, as Poplar's
 * `debug.loweredVarDumpFile` lists them: where each variable lives. On the
 * simulated IPU a variable of an IPU (a weight, optimizer state, gradient
 * accumulators, the activations and temporaries at the memory peak, code and
 * exchange buffers) is spread evenly over the IPU's compute tiles, the
 * tiles that are not I/O tiles (the capacity of the memory plan is theirs);
 * what `TensorLocations` keeps off chip is in streaming memory, with a
 * remote buffer each for weights and optimizer state. Replicas hold the
 * same layout on their own IPUs.
 *
 * Written as JSON (not PopVision's `profile.pop` or Poplar's capnp format):
 * `{ model, kind, replicas, ipus: [{ ipu, tiles, variables, streamingMemory }], remoteBuffers }`.
 */
import type { Executable, RemoteBufferSpec } from '../executable/executable.js';

/** One variable of an IPU and its place. */
export interface LoweredVariable {
  readonly name: string;
  /** What it is: `weights`, `optimizer state`, `activations`, ... */
  readonly kind: string;
  readonly bytes: number;
  /** The bytes on each of the IPU's compute tiles (rounded up). */
  readonly bytesPerTile: number;
}

/** The lowered variables of one IPU of replica 0. */
export interface LoweredIpu {
  readonly ipu: number;
  /** The compute tiles the variables are spread over, first and last, numbered across the device. */
  readonly tiles: readonly [number, number];
  readonly variables: readonly LoweredVariable[];
  /** What this IPU keeps in streaming memory, in bytes, in all and by kind. */
  readonly streamingMemory: { readonly bytes: number; readonly byKind: Readonly<Record<string, number>> };
}

/** The lowered variables of a compiled graph. */
export interface LoweredVariables {
  readonly model: string;
  readonly kind: Executable['kind'];
  /** Replicas, each holding the same layout on its own IPUs. */
  readonly replicas: number;
  readonly ipus: readonly LoweredIpu[];
  readonly remoteBuffers: readonly RemoteBufferSpec[];
}

/** The lowered variables of `executable`. */
export function loweredVariables(executable: Executable): LoweredVariables {
  const { spec, memory } = executable.hardware;
  return {
    model: executable.modelName,
    kind: executable.kind,
    replicas: executable.factors.replicationFactor,
    ipus: memory.ipus.map((use) => {
      const computeTiles = Math.max(1, Math.round(use.capacity / spec.memoryPerTile));
      const first = use.ipu * spec.tiles;
      return {
        ipu: use.ipu,
        tiles: [first, first + computeTiles - 1] as const,
        variables: use.items.map((item) => ({ name: item.name, kind: item.kind, bytes: item.bytes, bytesPerTile: Math.ceil(item.bytes / computeTiles) })),
        streamingMemory: { bytes: use.streaming.bytes, byKind: { ...use.streaming.byKind } },
      };
    }),
    remoteBuffers: executable.remoteBuffers ?? [],
  };
}
