/**
 * A program for `poptfjs run` in the launcher's tests: prints, as one JSON
 * line, the layout popdist reads in this instance and the options
 * `popdist.Options()` makes of it.
 */
import * as popdist from '../../lib/distributed/popdist.js';

const options = popdist.Options();
console.log(
  JSON.stringify({
    isPopdistEnvSet: popdist.isPopdistEnvSet(),
    instanceIndex: popdist.getInstanceIndex(),
    numInstances: popdist.getNumInstances(),
    numLocalReplicas: popdist.getNumLocalReplicas(),
    numTotalReplicas: popdist.getNumTotalReplicas(),
    replicaIndexOffset: popdist.getReplicaIndexOffset(),
    numIpusPerReplica: popdist.getNumIpusPerReplica(),
    replicationFactor: options.settings.replicationFactor,
    distributed: options.settings.distributed,
  }),
);
console.error(`instance ${popdist.getInstanceIndex()} on stderr`);
