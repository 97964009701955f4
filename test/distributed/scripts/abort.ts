/**
 * Run under `mpiexec -n 2`: rank 1 aborts the run with code 3 while rank 0
 * waits at a barrier it would never leave otherwise.
 */
import { writeSync } from 'node:fs';
import { mpiWorld } from '../../../lib/distributed/mpi_communicator.js';

const world = mpiWorld();
if (world.rank === 1) {
  // Written at once: MPI_Abort ends the process before a piped console.log would be flushed.
  writeSync(1, `${JSON.stringify({ rank: 1, aborting: true })}\n`);
  world.abort(3);
} else {
  await world.barrier();
  console.log(JSON.stringify({ rank: 0, leftBarrier: true }));
}
