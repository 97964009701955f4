import { describe, expect, it } from 'vitest';
import { PoptfjsError } from '../../lib/errors.js';
import { MPICH_ABI } from '../../lib/distributed/mpi_abi.js';
import { loadMpiLibrary } from '../../lib/distributed/mpi_library.js';
import { mpiRun } from './mpi_run.js';

describe('collectives on MPI', () => {
  it('sums, broadcasts and meets at barriers across 3 processes, with promises and blocking calls', async () => {
    const run = await mpiRun('test/distributed/scripts/collectives.ts', 3);
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
    expect(run.status).toBe(3);
    expect(run.byRank[1]).toEqual({ rank: 1, aborting: true });
    expect(run.byRank[0]).toBeUndefined();
  }, 120_000);
});
