/**
 * What each tile of the device runs and holds, as the archive of a compiled
 * graph describes it (Poplar's `target.saveArchive`, `archive.a`, holds one
 * ELF file per tile; the simulated IPU has no tile code, so each member of
 * poptfjs's archive is the JSON description of a range of tiles that run the
 * same program). On the simulated IPU every compute tile of an IPU takes its
 * share of each compute set (the cost model spreads a kernel over all of
 * them), and the I/O tiles (`TensorLocations.numIOTiles`, the last tiles of
 * each IPU) move what goes to and from the host and streaming memory; so
 * each IPU has one range of compute tiles, and one of I/O tiles if it has
 * any. Replica `r` runs on IPUs `r × ipusPerReplica` onwards, the same
 * program as replica 0 on its own tiles; IPUs reserved beyond the replicas
 * (a device is a power of two of IPUs) run nothing and have no member.
 *
 * A range's program is what its IPU does in one call, in order (the cost
 * model's timeline: compute sets, exchanges, syncs, with their cycles;
 * stretches that repeat are listed once, with how often they repeat), and
 * what it holds is each variable of its IPU spread evenly over its compute
 * tiles (lowered_variables.ts).
 */
import type { SegmentKind } from '../ipu/timeline.js';
import type { Executable } from '../executable/executable.js';
import type { ArchiveMember } from '../files/ar_archive.js';
import { loweredVariables } from './lowered_variables.js';

/** The kinds of work the I/O tiles take over when an IPU has any. */
const IO_KINDS: readonly SegmentKind[] = ['host', 'streaming'];

/** A range of tiles and what it runs and holds. */
export interface TileProgram {
  /** The first and last tile, numbered across the device. */
  readonly tiles: readonly [number, number];
  readonly ipu: number;
  readonly replica: number;
  readonly role: 'compute' | 'io';
  /** What the tiles run in one call, in order. */
  readonly program: ReadonlyArray<{ readonly kind: SegmentKind; readonly name: string; readonly cycles: number }>;
  /** Stretches of the program that repeat, and how often. */
  readonly repeats: ReadonlyArray<{ readonly what: string; readonly times: number }>;
  /** The variables each tile of the range holds, with its bytes. */
  readonly variables: ReadonlyArray<{ readonly name: string; readonly kind: string; readonly bytesPerTile: number }>;
}

/** The tile ranges of `executable`'s device, in tile order. */
export function tilePrograms(executable: Executable): TileProgram[] {
  const { placement, hardware, factors } = executable;
  const { timeline, spec } = hardware;
  const lowered = loweredVariables(executable);
  const repeats = (timeline.repeated ?? []).map((r) => ({ what: r.what, times: r.times }));
  const ranges: TileProgram[] = [];
  for (let device = 0; device < placement.ipusPerReplica * factors.replicationFactor; device++) {
    const ipu = device % placement.ipusPerReplica;
    const own = lowered.ipus[ipu]!;
    const first = device * spec.tiles;
    const computeTiles = own.tiles[1] - own.tiles[0] + 1;
    const ioTiles = spec.tiles - computeTiles;
    const program = (role: 'compute' | 'io') =>
      timeline.segments
        .filter((s) => s.ipu === ipu && (ioTiles === 0 || IO_KINDS.includes(s.kind) === (role === 'io')))
        .map((s) => ({ kind: s.kind, name: s.label, cycles: Math.round((s.end - s.start) * spec.clockHz) }));
    const common = { ipu: device, replica: Math.floor(device / placement.ipusPerReplica), repeats };
    ranges.push({
      ...common,
      tiles: [first, first + computeTiles - 1],
      role: 'compute',
      program: program('compute'),
      variables: own.variables.map((v) => ({ name: v.name, kind: v.kind, bytesPerTile: v.bytesPerTile })),
    });
    if (ioTiles > 0) ranges.push({ ...common, tiles: [first + computeTiles, first + spec.tiles - 1], role: 'io', program: program('io'), variables: [] });
  }
  return ranges;
}

/** The members of the archive of `executable`: one per tile range, named `t<first>-<last>`, each its JSON description. */
export function archiveMembers(executable: Executable): ArchiveMember[] {
  return tilePrograms(executable).map((range) => ({
    name: `t${range.tiles[0]}-${range.tiles[1]}`,
    bytes: new TextEncoder().encode(`${JSON.stringify(range, null, 1)}\n`),
  }));
}
