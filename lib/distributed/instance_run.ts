/**
 * Whether this process is one instance of several (PopRun's instances) and
 * which: a process runs as an instance when `opts.Distributed` says the run
 * has more than one process, or when `mpiexec` launched it among several
 * (MPICH's Hydra sets `PMI_SIZE`, Open MPI `OMPI_COMM_WORLD_SIZE`). The
 * instance index and count are MPI's rank and size; a process id set with
 * `opts.Distributed.configureProcessId` must agree with them.
 */
import { PoptfjsError } from '../common/errors.js';
import type { DistributedSettings } from '../options/distributed_options.js';
import { mpiWorld, type MpiCommunicator } from './mpi_communicator.js';
import { mpiProcess } from './mpi_implementation.js';

/** This process's place among the instances of a run. */
export interface InstanceRun {
  /** This instance's index, from 0 (its MPI rank). */
  readonly index: number;
  /** The number of instances (MPI's world size). */
  readonly count: number;
  /** The collectives over every instance. */
  readonly world: MpiCommunicator;
}

/**
 * This process's place among the instances of its run, or undefined when it
 * runs alone. MPI is started on first use. An error when `distributed` names
 * a layout MPI does not have (a process launched without `mpiexec`, or with
 * another count or rank).
 */
export function instanceRun(distributed: DistributedSettings, env: NodeJS.ProcessEnv = process.env): InstanceRun | undefined {
  const launched = mpiProcess(env)?.size ?? 1;
  if (distributed.numProcesses <= 1 && launched <= 1) return undefined;
  const world = mpiWorld();
  if (distributed.numProcesses > 1 && (world.size !== distributed.numProcesses || world.rank !== distributed.processId)) {
    throw new PoptfjsError(
      `opts.Distributed.configureProcessId(${distributed.processId}, ${distributed.numProcesses}) does not match this process's place in MPI ` +
        `(rank ${world.rank} of ${world.size}); launch the ${distributed.numProcesses} processes with mpiexec -n ${distributed.numProcesses} ` +
        '(or poptfjs run) and give each its rank as its process id',
      { type: 'distributed' },
    );
  }
  return { index: world.rank, count: world.size, world };
}
