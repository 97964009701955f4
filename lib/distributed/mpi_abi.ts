/**
 * The binary interface of the MPI implementations poptfjs calls: which
 * shared library to load and what the handles it takes are.
 *
 * MPICH and Open MPI agree on the functions' C prototypes but not on their
 * handle types, so each has its own table:
 *
 * - MPICH (and its ABI-compatible derivatives: Intel MPI, MVAPICH) ships
 *   `libmpi.so.12` (Debian and Ubuntu name it `libmpich.so.12`); its handles
 *   are `int` constants. From MPICH 4.0.2's `mpi.h`
 *   (`/usr/include/x86_64-linux-gnu/mpich/mpi.h` on Debian):
 *   `typedef int MPI_Comm` with `#define MPI_COMM_WORLD ((MPI_Comm)0x44000000)`,
 *   `typedef int MPI_Datatype` with `#define MPI_BYTE ((MPI_Datatype)0x4c00010d)`
 *   and `#define MPI_FLOAT ((MPI_Datatype)0x4c00040a)`,
 *   `typedef int MPI_Op` with `#define MPI_SUM (MPI_Op)(0x58000003)`,
 *   `#define MPI_THREAD_FUNNELED 1` and `#define MPI_SUCCESS 0`.
 * - Open MPI ships `libmpi.so.40`; its handles are pointers to objects the
 *   library exports. From Open MPI's `ompi/include/mpi.h.in`:
 *   `#define OMPI_PREDEFINED_GLOBAL(type, global) ((type) ((void *) &(global)))`,
 *   `#define MPI_COMM_WORLD OMPI_PREDEFINED_GLOBAL(MPI_Comm, ompi_mpi_comm_world)`,
 *   `#define MPI_BYTE OMPI_PREDEFINED_GLOBAL(MPI_Datatype, ompi_mpi_byte)`,
 *   `#define MPI_FLOAT OMPI_PREDEFINED_GLOBAL(MPI_Datatype, ompi_mpi_float)`,
 *   `#define MPI_SUM OMPI_PREDEFINED_GLOBAL(MPI_Op, ompi_mpi_op_sum)`, and the
 *   thread levels as an enum from `MPI_THREAD_SINGLE` (0), so
 *   `MPI_THREAD_FUNNELED` is 1 there too.
 */

import { MPI_RANK_VARIABLES, type MpiImplementationName } from './mpi_implementation.js';

/** A handle (communicator, datatype, operation) as given to its implementation. */
export type MpiHandleSpec =
  /** MPICH: the handle is this `int`. */
  | { readonly kind: 'int'; readonly value: number }
  /** Open MPI: the handle is the address of this exported symbol. */
  | { readonly kind: 'symbol'; readonly name: string };

/** What poptfjs needs of one implementation. */
export interface MpiAbi {
  readonly implementation: MpiImplementationName;
  /** Shared library names to try, in order (the dynamic loader's search path applies). */
  readonly libraries: readonly string[];
  /** The C type handles are passed as: `int` (MPICH) or a pointer-sized integer (Open MPI). */
  readonly handleType: 'int' | 'intptr_t';
  readonly commWorld: MpiHandleSpec;
  readonly byte: MpiHandleSpec;
  readonly float: MpiHandleSpec;
  readonly sum: MpiHandleSpec;
}

/** `MPI_THREAD_FUNNELED`: only the thread that initialised MPI calls it (1 in both implementations). */
export const MPI_THREAD_FUNNELED = 1;

/** `MPI_SUCCESS` (0 in both implementations). */
export const MPI_SUCCESS = 0;

/** MPICH's interface (`mpi.h` of MPICH 4.0.2). */
export const MPICH_ABI: MpiAbi = {
  implementation: 'MPICH',
  libraries: ['libmpi.so.12', 'libmpich.so.12'],
  handleType: 'int',
  commWorld: { kind: 'int', value: 0x44000000 },
  byte: { kind: 'int', value: 0x4c00010d },
  float: { kind: 'int', value: 0x4c00040a },
  sum: { kind: 'int', value: 0x58000003 },
};

/** Open MPI's interface (`ompi/include/mpi.h.in`). */
export const OPEN_MPI_ABI: MpiAbi = {
  implementation: 'Open MPI',
  libraries: ['libmpi.so.40'],
  handleType: 'intptr_t',
  commWorld: { kind: 'symbol', name: 'ompi_mpi_comm_world' },
  byte: { kind: 'symbol', name: 'ompi_mpi_byte' },
  float: { kind: 'symbol', name: 'ompi_mpi_float' },
  sum: { kind: 'symbol', name: 'ompi_mpi_op_sum' },
};

/**
 * The implementations in the order they are looked for: the one `mpiexec`
 * launched this process with first (MPICH's Hydra sets `PMI_RANK`, Open MPI
 * sets `OMPI_COMM_WORLD_RANK`), then MPICH, then Open MPI.
 */
export function abisToTry(env: NodeJS.ProcessEnv): readonly MpiAbi[] {
  return env[MPI_RANK_VARIABLES['Open MPI'].rank] !== undefined ? [OPEN_MPI_ABI, MPICH_ABI] : [MPICH_ABI, OPEN_MPI_ABI];
}
