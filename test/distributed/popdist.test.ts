import { afterEach, describe, expect, it, vi } from 'vitest';
import { DataLoader, Options, popdist, tf } from 'poptfjs';

/** The environment `poptfjs run --num-instances 2 --num-replicas 4 --ipus-per-replica 2` gives instance 1 under MPICH. */
const MPICH_INSTANCE_1 = {
  PMI_RANK: '1',
  PMI_SIZE: '2',
  POPDIST_NUM_TOTAL_REPLICAS: '4',
  POPDIST_NUM_LOCAL_REPLICAS: '2',
  POPDIST_REPLICA_INDEX_OFFSET: '2',
  POPDIST_NUM_IPUS_PER_REPLICA: '2',
};

function layout(env: NodeJS.ProcessEnv) {
  return [
    popdist.isPopdistEnvSet(env),
    popdist.getInstanceIndex(env),
    popdist.getNumInstances(env),
    popdist.getNumLocalReplicas(env),
    popdist.getNumTotalReplicas(env),
    popdist.getReplicaIndexOffset(env),
    popdist.getNumIpusPerReplica(env),
  ];
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('popdist', () => {
  it('reads the layout poptfjs run gives an instance, its index from the MPI rank', () => {
    expect(layout(MPICH_INSTANCE_1)).toEqual([true, 1, 2, 2, 4, 2, 2]);
    const { PMI_RANK, PMI_SIZE, ...popdistOnly } = MPICH_INSTANCE_1;
    expect(layout({ ...popdistOnly, OMPI_COMM_WORLD_RANK: PMI_RANK, OMPI_COMM_WORLD_SIZE: PMI_SIZE })).toEqual([true, 1, 2, 2, 4, 2, 2]);
  });

  it('describes one instance of one replica outside poptfjs run', () => {
    expect(layout({})).toEqual([false, 0, 1, 1, 1, 0, 1]);
  });

  it('reads process.env by default', () => {
    for (const [name, value] of Object.entries(MPICH_INSTANCE_1)) vi.stubEnv(name, value);
    expect([popdist.isPopdistEnvSet(), popdist.getInstanceIndex(), popdist.getNumTotalReplicas()]).toEqual([true, 1, 4]);
    const options = popdist.Options();
    expect([options.settings.replicationFactor, options.Distributed.processId, options.Distributed.numProcesses]).toEqual([2, 1, 2]);
  });

  it('makes Options with the local replicas and the instance as the process', () => {
    const options = popdist.Options(MPICH_INSTANCE_1);
    expect(options).toBeInstanceOf(Options);
    expect(options.settings.replicationFactor).toBe(2);
    expect(options.settings.distributed).toEqual({ processId: 1, numProcesses: 2 });
    expect(popdist.Options({}).settings).toEqual(new Options().settings);
  });

  it("gives each instance's DataLoader its consecutive block of the samples, as PopTorch's _SubDataset", async () => {
    const y = tf.range(0, 8, 1, 'float32');
    const batches: number[][] = [];
    for await (const batch of new DataLoader(popdist.Options(MPICH_INSTANCE_1), [y], { batchSize: 1 })) {
      batches.push(Array.from(batch[0]!.dataSync()));
      tf.dispose(batch);
    }
    // Combined batches of 2 replicas × 1 sample; each instance takes 2 × ⌊8 / (2 × 2)⌋ = 4 samples: instance 1 the samples 4-7.
    expect(batches).toEqual([
      [4, 5],
      [6, 7],
    ]);
    y.dispose();
  });

  it('refuses a layout that contradicts itself, naming the variables', () => {
    expect(() => popdist.getInstanceIndex({ ...MPICH_INSTANCE_1, POPDIST_NUM_LOCAL_REPLICAS: '3' })).toThrow(
      'popdist: 2 instance(s) of 3 replica(s) (POPDIST_NUM_LOCAL_REPLICAS) are not the 4 replicas of POPDIST_NUM_TOTAL_REPLICAS',
    );
    expect(() => popdist.getNumLocalReplicas({ ...MPICH_INSTANCE_1, POPDIST_REPLICA_INDEX_OFFSET: '0' })).toThrow(
      'popdist: instance 1 of 2 replica(s) starts at replica 2, not 0 (POPDIST_REPLICA_INDEX_OFFSET)',
    );
    expect(() => popdist.getNumIpusPerReplica({ ...MPICH_INSTANCE_1, POPDIST_NUM_IPUS_PER_REPLICA: 'two' })).toThrow(
      "popdist: POPDIST_NUM_IPUS_PER_REPLICA must be an integer of at least 1, got 'two'",
    );
    expect(() => popdist.getInstanceIndex({ ...MPICH_INSTANCE_1, PMI_RANK: '2' })).toThrow('PMI_RANK (2) must be less than PMI_SIZE (2)');
  });
});
