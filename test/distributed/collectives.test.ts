import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PoptfjsError } from '../../lib/common/errors.js';
import { MPICH_ABI } from '../../lib/distributed/mpi_abi.js';
import { loadMpiLibrary } from '../../lib/distributed/mpi_library.js';
import { readCheckpointFile } from '../../lib/files/checkpoint_file.js';
import { runProgram } from '../run_program.js';
import { mpiRun } from './mpi_run.js';

describe('collectives on MPI', () => {
  it('sums, broadcasts and meets at barriers across 3 processes, with promises and blocking calls', async () => {
    const run = await mpiRun('test/distributed/scripts/collectives.ts', 3, [mkdtempSync(join(tmpdir(), 'poptfjs-barrier-'))]);
    expect(run.status, run.stderr).toBe(0);
    expect(run.byRank).toHaveLength(3);
    for (const [rank, result] of run.byRank.entries()) {
      expect(result).toEqual({
        rank,
        size: 3,
        implementation: 'MPICH',
        // [1 + 2 + 3, 0.5 × (0 + 1 + 2), -(0 + 1 + 2)]
        sums: [6, 1.5, -3],
        // [10 × (0 + 1 + 2), 1 + 1 + 1]
        syncSums: [30, 3],
        summedInPlace: true,
        // rank 2's bytes
        fromLast: [2, 4, 253],
        // rank 0's byte
        fromFirst: [40],
        // no process left instanceBarrier() before the last one (which paused) arrived
        sawEveryArrival: true,
      });
    }
  }, 120_000);
});

describe('the MPI library', () => {
  it('names what to install when no MPI library is found', () => {
    const missing = { ...MPICH_ABI, libraries: ['libmpi-missing.so.99', 'libmpich-missing.so.98'] };
    expect(() => loadMpiLibrary({}, [missing])).toThrow(
      expect.objectContaining({
        constructor: PoptfjsError,
        type: 'distributed',
        message:
          'no MPI library found (tried libmpi-missing.so.99, libmpich-missing.so.98); install MPICH (Debian and Ubuntu: apt-get install mpich) ' +
          'or Open MPI (apt-get install openmpi-bin), or set POPTFJS_MPI_LIBRARY to its path',
      }),
    );
  });

  it('refuses an implementation it does not know the interface of', () => {
    expect(() => loadMpiLibrary({ POPTFJS_MPI_LIBRARY: 'libmpi.so.12', POPTFJS_MPI_IMPLEMENTATION: 'LAM' })).toThrow(
      "POPTFJS_MPI_IMPLEMENTATION is 'LAM'; expected 'MPICH' or 'Open MPI'",
    );
  });

  it('ends every process with the code of MPI_Abort', async () => {
    const run = await mpiRun('test/distributed/scripts/abort.ts', 2);
    // Only rank 1's MPI_Abort(3) ends the run with 3 (its own line may be lost with the processes it ends).
    expect(run.status).toBe(3);
    // Rank 0 never left its barrier.
    expect(run.byRank[0]).toBeUndefined();
  }, 120_000);
});

describe('data-parallel training over instances', () => {
  /** The final weights of a run, flattened. */
  const weightsOf = (result: Record<string, unknown> | undefined) => (result!.weights as number[][]).flat();

  /** Trains `replicas` replicas in one process and over `instances` instances, and checks every instance ends with the weights of the single process. */
  async function compare(replicas: number, accumulation: number, instances: number, dir?: string): Promise<void> {
    const [single, run] = await Promise.all([
      runProgram('test/distributed/scripts/train.ts', [String(replicas), String(accumulation), 'as-instances', String(instances)]),
      mpiRun('test/distributed/scripts/train.ts', instances, [String(replicas), String(accumulation), 'instances', ...(dir ? [dir] : [])]),
    ]);
    expect(single.status, single.stderr).toBe(0);
    expect(run.status, run.stderr).toBe(0);
    const expected = weightsOf(JSON.parse(single.stdout.trim().split('\n').pop()!) as Record<string, unknown>);
    expect(run.byRank).toHaveLength(instances);
    for (const result of run.byRank) {
      expect(result!.steps).toBe(3);
      // Dense(4 → 3) and Dense(3 → 1) with biases: 19 float32 gradients.
      expect((result!.allReduce as string).split('\n').slice(0, 2)).toEqual([
        `Gradient all-reduce across ${instances} instances over the host network (100.0 Gbit/s):`,
        `  76 B of gradients per update, 2(${instances}-1)/${instances} of them over each instance's link: 0.000 ms per update`,
      ]);
      const weights = weightsOf(result);
      expect(weights).toHaveLength(expected.length);
      weights.forEach((w, i) => expect(Math.abs(w - expected[i]!)).toBeLessThan(1e-5));
    }
  }

  it("2 instances × 1 replica train as one process with replicationFactor(2), from instance 0's weights", async () => {
    await compare(2, 1, 2);
  }, 240_000);

  it('2 instances × 2 replicas with gradient accumulation 2 train as one process with replicationFactor(4); only instance 0 writes checkpoints and exports', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'poptfjs-instances-'));
    await compare(4, 2, 2, dir);
    expect(readdirSync(dir).sort()).toEqual(['checkpoint-0', 'export-0']);
    expect(readCheckpointFile(join(dir, 'checkpoint-0')).deviceState.iterations).toBe(3);
  }, 240_000);

  it('refuses a weight split across replica groups, naming it', async () => {
    const run = await mpiRun('test/distributed/scripts/grouped_weight.ts', 2);
    expect(run.status, run.stderr).toBe(0);
    for (const [rank, result] of run.byRank.entries()) {
      expect(result).toEqual({
        rank,
        error: "parameter 'grouped_w' is split across replica groups, which a run of 2 instances does not support; run it in one process",
      });
    }
  }, 120_000);

  it('refuses a process layout MPI does not have: process 1 of 2 started without mpiexec', () => {
    const run = runProgram('test/distributed/scripts/unlaunched.ts');
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout.trim().split('\n').pop()!)).toEqual({
      rank: 0,
      error:
        "opts.Distributed.configureProcessId(1, 2) does not match this process's place in MPI (rank 0 of 1); " +
        'launch the 2 processes with mpiexec -n 2 (or poptfjs run) and give each its rank as its process id',
    });
  }, 120_000);
});
