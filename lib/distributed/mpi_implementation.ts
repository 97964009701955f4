/**
 * The MPI implementations `poptfjs run` launches instances with, MPICH and
 * Open MPI: which one the system's `mpiexec` is, the arguments each takes to
 * place the instances on their hosts, and the variables in which each gives
 * a process its rank.
 */
import { spawnSync } from 'node:child_process';
import { PoptfjsError } from '../common/errors.js';
import type { InstanceLayout } from './instance_layout.js';

/** The MPI implementations `poptfjs run` knows. */
export type MpiImplementationName = 'MPICH' | 'Open MPI';

/** The system's `mpiexec`. */
export interface Mpiexec {
  /** Which implementation it is. */
  readonly implementation: MpiImplementationName;
  /** Its version, as `mpiexec --version` prints it. */
  readonly version: string;
}

/** The variables in which each implementation gives a process its rank and the number of processes. */
export const MPI_RANK_VARIABLES: Readonly<Record<MpiImplementationName, { readonly rank: string; readonly size: string }>> = {
  MPICH: { rank: 'PMI_RANK', size: 'PMI_SIZE' },
  'Open MPI': { rank: 'OMPI_COMM_WORLD_RANK', size: 'OMPI_COMM_WORLD_SIZE' },
};

/** The error when the system has no `mpiexec`. */
export const NO_MPIEXEC_MESSAGE =
  'run: no mpiexec on the PATH: poptfjs run launches its instances with MPI; install MPICH (Debian and Ubuntu: apt-get install mpich) or Open MPI';

/**
 * Runs `mpiexec --version` (found on `env.PATH`) and tells MPICH (Hydra) from
 * Open MPI. No `mpiexec`, or one of another implementation, is an error
 * saying what to install.
 */
export function detectMpiexec(env: NodeJS.ProcessEnv = process.env): Mpiexec {
  const result = spawnSync('mpiexec', ['--version'], { env, encoding: 'utf8', timeout: 30_000 });
  if (result.error !== undefined) {
    if ((result.error as NodeJS.ErrnoException).code === 'ENOENT') throw new PoptfjsError(NO_MPIEXEC_MESSAGE, { type: 'cli' });
    throw new PoptfjsError(`run: mpiexec --version failed: ${result.error.message}`, { type: 'cli' });
  }
  const text = `${result.stdout}\n${result.stderr}`;
  const openMpi = /\((?:Open MPI|OpenRTE)\)\s+(\S+)/.exec(text);
  if (openMpi) return { implementation: 'Open MPI', version: openMpi[1]! };
  const hydra = /HYDRA build details:[\s\S]*?Version:\s+(\S+)/.exec(text);
  if (hydra) return { implementation: 'MPICH', version: hydra[1]! };
  const said = text.trim().split('\n')[0] ?? '';
  throw new PoptfjsError(`run: the mpiexec on the PATH is neither MPICH nor Open MPI (its --version says '${said}'); install MPICH (apt-get install mpich) or Open MPI`, {
    type: 'cli',
  });
}

/**
 * The `mpiexec` arguments that place the layout's instances on its hosts, in
 * blocks (`host:slots`). Open MPI also gets `--bind-to none` (an instance uses
 * every core, as with PopRun), `--allow-run-as-root` for root, and `-x` for
 * `PATH` and the `POPTFJS_*` and `POPTORCH_*` variables that are set, which
 * MPICH passes by itself.
 */
export function placementArguments(mpiexec: Mpiexec, layout: InstanceLayout, env: NodeJS.ProcessEnv = process.env): string[] {
  const hosts = layout.hosts.map((h) => `${h.name}:${h.instances}`).join(',');
  if (mpiexec.implementation === 'MPICH') return ['-hosts', hosts];
  const forwarded = Object.keys(env).filter((name) => name === 'PATH' || /^(POPTFJS|POPTORCH)_/.test(name));
  return [...(process.getuid?.() === 0 ? ['--allow-run-as-root'] : []), '--bind-to', 'none', '--host', hosts, ...forwarded.flatMap((name) => ['-x', name])];
}

/** This process's place among the processes MPI started together. */
export interface MpiProcess {
  /** Its rank, from 0. */
  readonly rank: number;
  /** How many processes there are. */
  readonly size: number;
}

function integerVariable(env: NodeJS.ProcessEnv, name: string, least: number): number {
  const text = env[name]!;
  if (!/^\d+$/.test(text) || Number(text) < least) {
    throw new PoptfjsError(`${name} must be an integer of at least ${least}, got '${text}'`, { type: 'distributed' });
  }
  return Number(text);
}

/**
 * The rank and size MPICH (`PMI_RANK`, `PMI_SIZE`) or Open MPI
 * (`OMPI_COMM_WORLD_RANK`, `OMPI_COMM_WORLD_SIZE`) gave this process, or
 * `undefined` when it was not started by MPI.
 */
export function mpiProcess(env: NodeJS.ProcessEnv = process.env): MpiProcess | undefined {
  for (const { rank, size } of Object.values(MPI_RANK_VARIABLES)) {
    if (env[rank] === undefined) continue;
    if (env[size] === undefined) throw new PoptfjsError(`${rank} is set but ${size} is not: this process was not started by a complete MPI launcher`, { type: 'distributed' });
    const process = { rank: integerVariable(env, rank, 0), size: integerVariable(env, size, 1) };
    if (process.rank >= process.size) throw new PoptfjsError(`${rank} (${process.rank}) must be less than ${size} (${process.size})`, { type: 'distributed' });
    return process;
  }
  return undefined;
}
