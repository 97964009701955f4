/**
 * Where an executable's programs run on a device: for each unit of the
 * schedule and each replica, the device IPUs it reaches and the programs it
 * runs on each (its stage programs `F<stage>` / `B<stage>` and the kernels
 * of its nodes, Poplar's vertices). Simulated faults are planted at and
 * raised from these locations.
 */
import type { Executable } from '../executable/executable.js';

/** For each unit, for each replica: device IPU → the programs the unit runs there. */
export type UnitPrograms = ReadonlyArray<ReadonlyArray<ReadonlyMap<number, readonly string[]>>>;

/** A program and the device IPUs it runs on. */
export interface ProgramPlacement {
  readonly program: string;
  readonly ipus: readonly number[];
}

/** The programs each unit of `executable` runs on each device IPU, per replica. */
export function unitPrograms(executable: Executable): UnitPrograms {
  const { placement, graph } = executable;
  const replicas = executable.factors.replicationFactor;
  const perReplica = placement.ipusPerReplica;
  return placement.units.map((unit, u) =>
    Array.from({ length: replicas }, (_, r) => {
      const programs = new Map<number, string[]>();
      const add = (ipu: number, program: string) => {
        const deviceIpu = r * perReplica + ipu;
        const list = programs.get(deviceIpu) ?? [];
        if (!list.includes(program)) list.push(program);
        programs.set(deviceIpu, list);
      };
      unit.stages.forEach((stage, i) => add(unit.ipus[i]!, `${unit.pass === 'forward' ? 'F' : 'B'}${stage}`));
      graph.nodes.forEach((node) => {
        if (placement.nodeUnits[node.id] === u) add(placement.stages[placement.nodeStages[node.id]!]!.ipu, node.kernel);
      });
      return programs;
    }),
  );
}

/** Every program of `units` with the device IPUs it runs on (sorted), in the order first met. */
export function programPlacements(units: UnitPrograms): ProgramPlacement[] {
  const loaded = new Map<string, Set<number>>();
  for (const perUnit of units) {
    for (const programs of perUnit) {
      for (const [ipu, names] of programs) for (const name of names) loaded.set(name, (loaded.get(name) ?? new Set()).add(ipu));
    }
  }
  return [...loaded].map(([program, ipus]) => ({ program, ipus: [...ipus].sort((a, b) => a - b) }));
}
