/**
 * Run under `mpiexec -n 2`: rank 1 aborts the run with code 3 while rank 0
 * waits at a barrier it would never leave otherwise.
 */
import { mpiWorld } from '../../../lib/distributed/mpi_communicator.js';

const world = mpiWorld();
if (world.rank === 1) {
  console.log(JSON.stringify({ rank: 1, aborting: true }));
  world.abort(3);
} else {
  await world.barrier();
  console.log(JSON.stringify({ rank: 0, leftBarrier: true }));
}
