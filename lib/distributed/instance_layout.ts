/**
 * How `poptfjs run` lays a run out: instances over hosts, replicas over
 * instances, IPUs over replicas, checked before anything is launched.
 *
 * Each of the `numInstances` instances runs `numReplicas / numInstances`
 * local replicas of `ipusPerReplica` IPUs each. Instances are placed on the
 * hosts in blocks, as evenly as they divide: with 4 instances on 2 hosts,
 * instances 0 and 1 run on the first host and 2 and 3 on the second. Every
 * host has `POPTFJS_NUM_IPUS` simulated IPUs (the value where `poptfjs run` is
 * started), and its instances together may not need more.
 */
import { PoptfjsError } from '../common/errors.js';

/** The host a run uses when none is given. */
export const LOCAL_HOST = 'localhost';

/** What the command line asks for. */
export interface InstanceLayoutRequest {
  /** Host processes to run (`--num-instances`). */
  readonly numInstances: number;
  /** Replicas over all instances (`--num-replicas`). */
  readonly numReplicas: number;
  /** IPUs each replica uses (`--ipus-per-replica`). */
  readonly ipusPerReplica: number;
  /** The hosts to run on (`--host`); the local host when left out. */
  readonly hosts?: readonly string[];
}

/** The instances one host runs: `firstInstance` to `firstInstance + instances - 1`. */
export interface HostInstances {
  /** The host's name, as given to `mpiexec`. */
  readonly name: string;
  /** The index of its first instance. */
  readonly firstInstance: number;
  /** How many instances it runs. */
  readonly instances: number;
}

/** A checked layout. */
export interface InstanceLayout {
  /** Host processes. */
  readonly numInstances: number;
  /** Replicas over all instances. */
  readonly numReplicas: number;
  /** Replicas each instance runs: `numReplicas / numInstances`. */
  readonly localReplicas: number;
  /** IPUs each replica uses. */
  readonly ipusPerReplica: number;
  /** The hosts, in order, each with its block of instances. */
  readonly hosts: readonly HostInstances[];
}

function layoutError(message: string): PoptfjsError {
  return new PoptfjsError(`run: ${message}`, { type: 'cli' });
}

/**
 * Checks `request` and lays it out: the replicas divide evenly over the
 * instances, each host runs at least one instance, and no host needs more
 * than `ipusPerHost` IPUs. Errors name the numbers that do not fit.
 */
export function instanceLayout(request: InstanceLayoutRequest, ipusPerHost: number): InstanceLayout {
  const { numInstances, numReplicas, ipusPerReplica } = request;
  if (numReplicas % numInstances !== 0) {
    throw layoutError(`--num-replicas ${numReplicas} is not divisible by --num-instances ${numInstances}: every instance runs the same number of replicas`);
  }
  const names = request.hosts ?? [LOCAL_HOST];
  const repeated = names.find((name, i) => names.indexOf(name) !== i);
  if (repeated !== undefined) throw layoutError(`--host lists '${repeated}' more than once`);
  if (names.length > numInstances) {
    throw layoutError(`--host lists ${names.length} hosts for ${numInstances} instance(s): every host needs at least one instance`);
  }
  const localReplicas = numReplicas / numInstances;
  const hosts: HostInstances[] = [];
  let firstInstance = 0;
  for (const [i, name] of names.entries()) {
    const instances = Math.floor(numInstances / names.length) + (i < numInstances % names.length ? 1 : 0);
    const needed = instances * localReplicas * ipusPerReplica;
    if (needed > ipusPerHost) {
      throw layoutError(
        `host ${name} needs ${needed} IPUs (${instances} instance(s) × ${localReplicas} replica(s) × ${ipusPerReplica} IPU(s) per replica) ` +
          `but has ${ipusPerHost} (POPTFJS_NUM_IPUS)`,
      );
    }
    hosts.push({ name, firstInstance, instances });
    firstInstance += instances;
  }
  return { numInstances, numReplicas, localReplicas, ipusPerReplica, hosts };
}
