/**
 * The MPI thread: loads the system's MPI library, initialises it, replies
 * `ready` with the rank and size of `MPI_COMM_WORLD`, then carries out the
 * main thread's requests one at a time (see mpi_messages.ts). It is the only
 * thread of the process that calls MPI.
 */
import { workerData } from 'node:worker_threads';
import { MPI_THREAD_FUNNELED } from './mpi_abi.js';
import { loadMpiLibrary, type MpiLibrary } from './mpi_library.js';
import { REPLY_COUNTER, type MpiReply, type MpiRequest, type MpiThreadSetup } from './mpi_messages.js';

const setup = workerData as MpiThreadSetup;
const signal = new Int32Array(setup.signal);

function reply(message: MpiReply): void {
  setup.port.postMessage(message);
  Atomics.add(signal, REPLY_COUNTER, 1);
  Atomics.notify(signal, REPLY_COUNTER);
}

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** Carries out one request. */
function carryOut(mpi: MpiLibrary, request: MpiRequest): void {
  switch (request.kind) {
    case 'allReduceSum': {
      const data = new Float32Array(request.data, request.offset, request.length);
      mpi.allReduceSum(data.slice(), data);
      return;
    }
    case 'broadcast':
      mpi.broadcast(new Uint8Array(request.data, request.offset, request.length), request.root);
      return;
    case 'barrier':
      mpi.barrier();
      return;
    case 'abort':
      mpi.abort(request.code);
      return;
    case 'finalize':
      mpi.finalize();
      return;
  }
}

function start(): void {
  let mpi: MpiLibrary;
  try {
    mpi = loadMpiLibrary();
    const provided = mpi.initThread();
    if (provided < MPI_THREAD_FUNNELED) {
      throw new Error(`${mpi.implementation} (${mpi.file}) provides thread level ${provided}, below MPI_THREAD_FUNNELED (${MPI_THREAD_FUNNELED})`);
    }
    reply({ kind: 'ready', rank: mpi.rank(), size: mpi.size(), implementation: mpi.implementation, library: mpi.file });
  } catch (error) {
    reply({ kind: 'failed', message: describe(error) });
    setup.port.close();
    return;
  }
  setup.port.on('message', (request: MpiRequest) => {
    try {
      carryOut(mpi, request);
      reply({ kind: 'done' });
    } catch (error) {
      reply({ kind: 'failed', message: describe(error) });
    }
    if (request.kind === 'finalize') setup.port.close();
  });
}

start();
