/**
 * The environment variables in which `poptfjs run` gives each instance the
 * layout of the run, under the names PopRun gives them to PopDist.
 *
 * | variable                       | value                                        |
 * | ------------------------------ | -------------------------------------------- |
 * | `POPDIST_NUM_TOTAL_REPLICAS`   | replicas over all instances (`--num-replicas`) |
 * | `POPDIST_NUM_LOCAL_REPLICAS`   | replicas of this instance                    |
 * | `POPDIST_REPLICA_INDEX_OFFSET` | the index of this instance's first replica   |
 * | `POPDIST_NUM_IPUS_PER_REPLICA` | IPUs per replica (`--ipus-per-replica`)      |
 *
 * The instance's index and the number of instances are its MPI rank and the
 * number of MPI processes (see `mpiProcess`), as in PopDist.
 */
import type { InstanceLayout } from './instance_layout.js';

/** The variables' names. */
export const POPDIST_VARIABLES = {
  numTotalReplicas: 'POPDIST_NUM_TOTAL_REPLICAS',
  numLocalReplicas: 'POPDIST_NUM_LOCAL_REPLICAS',
  replicaIndexOffset: 'POPDIST_REPLICA_INDEX_OFFSET',
  numIpusPerReplica: 'POPDIST_NUM_IPUS_PER_REPLICA',
} as const;

/** The layout values instance `instanceIndex` is given. */
export function popdistEnvironment(layout: Pick<InstanceLayout, 'numReplicas' | 'localReplicas' | 'ipusPerReplica'>, instanceIndex: number): Record<string, string> {
  return {
    [POPDIST_VARIABLES.numTotalReplicas]: String(layout.numReplicas),
    [POPDIST_VARIABLES.numLocalReplicas]: String(layout.localReplicas),
    [POPDIST_VARIABLES.replicaIndexOffset]: String(instanceIndex * layout.localReplicas),
    [POPDIST_VARIABLES.numIpusPerReplica]: String(layout.ipusPerReplica),
  };
}
