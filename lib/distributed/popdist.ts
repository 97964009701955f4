/**
 * PopDist's API for programs run by `poptfjs run`: the layout of the run this
 * instance belongs to, and {@link Options} set up for it. Import it as
 * `import { popdist } from 'poptfjs'`.
 *
 * The layout is read from the environment `poptfjs run` gives each instance
 * (PopDist's variables, see `popdist_environment.ts`); the instance's index
 * and the number of instances are its MPI rank and the number of MPI
 * processes (`PMI_RANK` and `PMI_SIZE` under MPICH, `OMPI_COMM_WORLD_RANK`
 * and `OMPI_COMM_WORLD_SIZE` under Open MPI). Outside `poptfjs run` the
 * getters describe a run of one instance with one replica of one IPU, so the
 * same program also runs alone. Values that contradict each other are an
 * error naming the variables.
 */
import { PoptfjsError } from '../common/errors.js';
import { Options as PoptfjsOptions } from '../options/options.js';
import { mpiProcess } from './mpi_implementation.js';
import { POPDIST_VARIABLES } from './popdist_environment.js';

/** The run's layout as this instance sees it. */
interface PopdistLayout {
  readonly instanceIndex: number;
  readonly numInstances: number;
  readonly numTotalReplicas: number;
  readonly numLocalReplicas: number;
  readonly replicaIndexOffset: number;
  readonly numIpusPerReplica: number;
}

function variable(env: NodeJS.ProcessEnv, name: string, least: number, otherwise: number): number {
  const text = env[name];
  if (text === undefined) return otherwise;
  if (!/^\d+$/.test(text) || Number(text) < least) throw new PoptfjsError(`popdist: ${name} must be an integer of at least ${least}, got '${text}'`, { type: 'distributed' });
  return Number(text);
}

function popdistLayout(env: NodeJS.ProcessEnv): PopdistLayout {
  const mpi = mpiProcess(env);
  const layout: PopdistLayout = {
    instanceIndex: mpi?.rank ?? 0,
    numInstances: mpi?.size ?? 1,
    numTotalReplicas: variable(env, POPDIST_VARIABLES.numTotalReplicas, 1, 1),
    numLocalReplicas: variable(env, POPDIST_VARIABLES.numLocalReplicas, 1, 1),
    replicaIndexOffset: variable(env, POPDIST_VARIABLES.replicaIndexOffset, 0, 0),
    numIpusPerReplica: variable(env, POPDIST_VARIABLES.numIpusPerReplica, 1, 1),
  };
  if (!isPopdistEnvSet(env)) return layout;
  const { numTotalReplicas: total, numLocalReplicas: local, numInstances, instanceIndex, replicaIndexOffset } = layout;
  if (local * numInstances !== total) {
    throw new PoptfjsError(
      `popdist: ${numInstances} instance(s) of ${local} replica(s) (${POPDIST_VARIABLES.numLocalReplicas}) are not the ${total} replicas of ${POPDIST_VARIABLES.numTotalReplicas}`,
      { type: 'distributed' },
    );
  }
  if (replicaIndexOffset !== instanceIndex * local) {
    throw new PoptfjsError(
      `popdist: instance ${instanceIndex} of ${local} replica(s) starts at replica ${instanceIndex * local}, not ${replicaIndexOffset} (${POPDIST_VARIABLES.replicaIndexOffset})`,
      { type: 'distributed' },
    );
  }
  return layout;
}

/** Whether this process was started by `poptfjs run` (PopDist's `POPDIST_NUM_TOTAL_REPLICAS` is set). */
export function isPopdistEnvSet(env: NodeJS.ProcessEnv = process.env): boolean {
  return env[POPDIST_VARIABLES.numTotalReplicas] !== undefined;
}

/** This instance's index, from 0: its MPI rank. */
export function getInstanceIndex(env: NodeJS.ProcessEnv = process.env): number {
  return popdistLayout(env).instanceIndex;
}

/** How many instances the run has: the number of MPI processes. */
export function getNumInstances(env: NodeJS.ProcessEnv = process.env): number {
  return popdistLayout(env).numInstances;
}

/** The replicas this instance runs (`--num-replicas / --num-instances`). */
export function getNumLocalReplicas(env: NodeJS.ProcessEnv = process.env): number {
  return popdistLayout(env).numLocalReplicas;
}

/** The replicas of the whole run (`--num-replicas`). */
export function getNumTotalReplicas(env: NodeJS.ProcessEnv = process.env): number {
  return popdistLayout(env).numTotalReplicas;
}

/** The index of this instance's first replica among all replicas of the run. */
export function getReplicaIndexOffset(env: NodeJS.ProcessEnv = process.env): number {
  return popdistLayout(env).replicaIndexOffset;
}

/** IPUs each replica uses (`--ipus-per-replica`). */
export function getNumIpusPerReplica(env: NodeJS.ProcessEnv = process.env): number {
  return popdistLayout(env).numIpusPerReplica;
}

/**
 * Options for this instance, as PopDist's `popdist.poptorch.Options()`: the
 * options `new Options()` gives, with `replicationFactor` set to the local
 * replicas and `Distributed.configureProcessId(instance index, number of
 * instances)`.
 */
export function Options(env: NodeJS.ProcessEnv = process.env): PoptfjsOptions {
  const layout = popdistLayout(env);
  const options = new PoptfjsOptions().replicationFactor(layout.numLocalReplicas);
  options.Distributed.configureProcessId(layout.instanceIndex, layout.numInstances);
  return options;
}
