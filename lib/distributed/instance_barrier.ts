/**
 * A barrier across the instances of a multi-instance run: PopDist's
 * `barrier`. Every instance calls it; each resolves once all have. In a
 * process that runs alone it resolves at once.
 */
import { mpiWorld } from './mpi_communicator.js';
import { mpiProcess } from './mpi_implementation.js';

/** Resolves when every instance of the run has called it (at once when this process runs alone); the event loop stays free meanwhile. */
export async function instanceBarrier(): Promise<void> {
  if ((mpiProcess()?.size ?? 1) <= 1) return;
  await mpiWorld().barrier();
}
