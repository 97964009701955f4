/**
 * Run under `mpiexec -n N`: each process sums, broadcasts and meets at
 * barriers through MPI, then prints one JSON line of what it got.
 */
import { mpiWorld } from '../../../lib/distributed/mpi_communicator.js';

const world = mpiWorld();
const r = world.rank;
// Promise forms.
const sums = await world.allReduceSum(new Float32Array([r + 1, 0.5 * r, -r]));
const fromLast = await world.broadcast(new Uint8Array([r, r * 2, 255 - r]), world.size - 1);
await world.barrier();
// Blocking forms, from a SharedArrayBuffer (summed in place).
const onShared = new Float32Array(new SharedArrayBuffer(8));
onShared.set([r * 10, 1]);
const syncSums = world.allReduceSumSync(onShared);
const fromFirst = world.broadcastSync(new Uint8Array([r + 40]), 0);
world.barrierSync();
console.log(
  JSON.stringify({
    rank: r,
    size: world.size,
    implementation: world.implementation,
    sums: [...sums],
    syncSums: [...syncSums],
    summedInPlace: syncSums === onShared,
    fromLast: [...fromLast],
    fromFirst: [...fromFirst],
  }),
);
