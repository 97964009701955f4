/**
 * Run under `mpiexec -n N` with a directory: each process sums, broadcasts
 * and meets at barriers through MPI, then prints one JSON line of what it
 * got. Before the last barrier (`instanceBarrier`) each process marks its
 * arrival with a file, the last one after a pause; after it, each looks for
 * every mark.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { instanceBarrier } from '../../../lib/distributed/instance_barrier.js';
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
const dir = process.argv[2]!;
if (r === world.size - 1) await sleep(300);
writeFileSync(join(dir, `arrived-${r}`), '');
await instanceBarrier();
const sawEveryArrival = Array.from({ length: world.size }, (_, i) => existsSync(join(dir, `arrived-${i}`))).every(Boolean);
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
    sawEveryArrival,
  }),
);
