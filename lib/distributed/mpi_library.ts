/**
 * The system's MPI library, loaded with koffi and bound to the handful of
 * functions poptfjs calls. It is used by the MPI thread only (mpi_thread.ts):
 * the thread that calls `MPI_Init_thread` is the one that makes every MPI
 * call (`MPI_THREAD_FUNNELED`).
 *
 * koffi, a maintained FFI package on the npm registry, ships prebuilt
 * binaries for Linux, macOS, Windows and the BSDs, so `npm install` needs no
 * compiler and no download besides the registry; binding the C functions at
 * run time is what lets one build of poptfjs talk to MPICH or Open MPI,
 * whichever the system has, instead of a native addon compiled against one
 * of them.
 */
import koffi from 'koffi';
import { PoptfjsError } from '../common/errors.js';
import { abisToTry, MPI_SUCCESS, MPI_THREAD_FUNNELED, type MpiAbi, type MpiHandleSpec } from './mpi_abi.js';
import type { MpiImplementationName } from './mpi_implementation.js';

/** A handle as passed to the library: an `int` (MPICH) or an address (Open MPI). */
type Handle = number | bigint;

/** What to install when no MPI library can be loaded. */
export const MPI_INSTALL_HINT = 'install MPICH (Debian and Ubuntu: apt-get install mpich) or Open MPI (apt-get install openmpi-bin)';

/** The MPI functions poptfjs calls, on the thread that loaded them. */
export interface MpiLibrary {
  readonly implementation: MpiImplementationName;
  /** The file the library was loaded from. */
  readonly file: string;
  /** `MPI_Init_thread` asking for `MPI_THREAD_FUNNELED`; returns the level provided. */
  initThread(): number;
  /** `MPI_Comm_rank` of `MPI_COMM_WORLD`. */
  rank(): number;
  /** `MPI_Comm_size` of `MPI_COMM_WORLD`. */
  size(): number;
  /** `MPI_Allreduce` of `send` into `receive` (float32, `MPI_SUM`, `MPI_COMM_WORLD`). */
  allReduceSum(send: Float32Array, receive: Float32Array): void;
  /** `MPI_Bcast` of `data` (as bytes) from `root` over `MPI_COMM_WORLD`. */
  broadcast(data: Uint8Array, root: number): void;
  /** `MPI_Barrier` of `MPI_COMM_WORLD`. */
  barrier(): void;
  /** `MPI_Abort` of `MPI_COMM_WORLD` with `code`: ends every process of the run. */
  abort(code: number): void;
  /** `MPI_Finalize`. */
  finalize(): void;
}

/** Binds the functions of a loaded library with the handles of `abi`. */
function bind(lib: koffi.IKoffiLib, abi: MpiAbi, file: string): MpiLibrary {
  const h = abi.handleType;
  const handle = (spec: MpiHandleSpec): Handle => (spec.kind === 'int' ? spec.value : koffi.address(lib.symbol(spec.name, koffi.opaque())));
  const world = handle(abi.commWorld);
  const byte = handle(abi.byte);
  const float = handle(abi.float);
  const sum = handle(abi.sum);
  const intOut = koffi.out(koffi.pointer('int'));
  const initThread = lib.func('MPI_Init_thread', 'int', ['void *', 'void *', 'int', intOut]);
  const commRank = lib.func('MPI_Comm_rank', 'int', [h, intOut]);
  const commSize = lib.func('MPI_Comm_size', 'int', [h, intOut]);
  const allreduce = lib.func('MPI_Allreduce', 'int', ['void *', 'void *', 'int', h, h, h]);
  const bcast = lib.func('MPI_Bcast', 'int', ['void *', 'int', h, 'int', h]);
  const barrier = lib.func('MPI_Barrier', 'int', [h]);
  const abort = lib.func('MPI_Abort', 'int', [h, 'int']);
  const finalize = lib.func('MPI_Finalize', 'int', []);
  const check = (call: string, code: number): void => {
    if (code !== MPI_SUCCESS) throw new PoptfjsError(`${call} failed with MPI error code ${code} (${abi.implementation}, ${file})`, { type: 'distributed' });
  };
  const out = (call: string, f: (value: number[]) => number): number => {
    const value = [0];
    check(call, f(value));
    return value[0]!;
  };
  return {
    implementation: abi.implementation,
    file,
    initThread: () => out('MPI_Init_thread', (provided) => initThread(null, null, MPI_THREAD_FUNNELED, provided)),
    rank: () => out('MPI_Comm_rank', (rank) => commRank(world, rank)),
    size: () => out('MPI_Comm_size', (size) => commSize(world, size)),
    allReduceSum: (send, receive) => check('MPI_Allreduce', allreduce(send, receive, send.length, float, sum, world)),
    broadcast: (data, root) => check('MPI_Bcast', bcast(data, data.length, byte, root, world)),
    barrier: () => check('MPI_Barrier', barrier(world)),
    abort: (code) => check('MPI_Abort', abort(world, code)),
    finalize: () => check('MPI_Finalize', finalize()),
  };
}

/**
 * Loads the system's MPI library: `POPTFJS_MPI_LIBRARY` if set (a path or a
 * name, of the implementation `POPTFJS_MPI_IMPLEMENTATION` names, MPICH by
 * default), else the first library of `abis` found (MPICH's and Open MPI's,
 * the implementation that launched this process first). An error names what
 * was tried and what to install.
 */
export function loadMpiLibrary(env: NodeJS.ProcessEnv = process.env, abis: readonly MpiAbi[] = abisToTry(env)): MpiLibrary {
  const forced = env.POPTFJS_MPI_LIBRARY;
  if (forced !== undefined) {
    const implementation = env.POPTFJS_MPI_IMPLEMENTATION ?? 'MPICH';
    const abi = abis.find((a) => a.implementation === implementation);
    if (!abi) {
      throw new PoptfjsError(`POPTFJS_MPI_IMPLEMENTATION is '${implementation}'; expected ${abis.map((a) => `'${a.implementation}'`).join(' or ')}`, { type: 'distributed' });
    }
    try {
      return bind(koffi.load(forced), abi, forced);
    } catch (error) {
      throw new PoptfjsError(`cannot load the MPI library POPTFJS_MPI_LIBRARY=${forced}: ${error instanceof Error ? error.message : String(error)}`, {
        type: 'distributed',
        cause: error,
      });
    }
  }
  const tried: string[] = [];
  for (const abi of abis) {
    for (const file of abi.libraries) {
      let lib: koffi.IKoffiLib;
      try {
        lib = koffi.load(file);
      } catch {
        tried.push(file);
        continue;
      }
      return bind(lib, abi, file);
    }
  }
  throw new PoptfjsError(`no MPI library found (tried ${tried.join(', ')}); ${MPI_INSTALL_HINT}, or set POPTFJS_MPI_LIBRARY to its path`, {
    type: 'distributed',
  });
}
