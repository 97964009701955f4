/**
 * `poptfjs run`: launches the instances of a multi-instance run through the
 * system's `mpiexec` (MPICH or Open MPI), as PopRun does.
 *
 * The layout is checked before anything starts (see `instance_layout.ts`).
 * `mpiexec` starts the instance runner (`run_instance.ts`) once per instance,
 * placed on the hosts in blocks; each runner runs the command with the
 * layout in its environment under PopDist's names and reports how the
 * command ended. The first instance to fail (an exit code other than 0, a
 * signal, a command that cannot start) ends the run: the launcher says which
 * instance failed and why, has `mpiexec` end the others (SIGTERM, then
 * SIGKILL after {@link TERMINATION_GRACE_MS}), and exits with the failed
 * instance's status.
 */
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { extname, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { PoptfjsError } from '../common/errors.js';
import { describeInstanceExit, exitStatus, instanceFailed, readExitReport, type InstanceExit } from './instance_exit.js';
import { instanceLayout, type InstanceLayoutRequest } from './instance_layout.js';
import { instanceRunnerArguments } from './instance_runner.js';
import { detectMpiexec, placementArguments } from './mpi_implementation.js';

/** What `poptfjs run` is asked to do. */
export interface RunRequest extends InstanceLayoutRequest {
  /** More arguments for `mpiexec` (`--mpi-args`), placed before the program. */
  readonly mpiArgs: readonly string[];
  /** Write instance `i`'s output to `<outputDir>/instance-<i>.log` instead of prefixing it with `[<i>] `. */
  readonly outputDir?: string;
  /** The command each instance runs, and its arguments. */
  readonly command: readonly string[];
}

/** Where the launcher prints: the instances' standard output, and its own reports. */
export interface LauncherStreams {
  readonly stdout: Writable;
  readonly stderr: Writable;
}

/** How long the other instances have to end after SIGTERM before they are killed. */
export const TERMINATION_GRACE_MS = 5_000;

/** The simulated IPUs of each host when `POPTFJS_NUM_IPUS` is not set. */
const DEFAULT_IPUS_PER_HOST = 16;

function ipusPerHost(env: NodeJS.ProcessEnv): number {
  const text = env.POPTFJS_NUM_IPUS;
  if (text === undefined || text === '') return DEFAULT_IPUS_PER_HOST;
  if (!/^\d+$/.test(text) || Number(text) < 1) throw new PoptfjsError(`run: POPTFJS_NUM_IPUS must be a positive integer, got '${text}'`, { type: 'cli' });
  return Number(text);
}

/** The instance runner program next to this module, and the node arguments that run it (tsx for the sources). */
function instanceRunnerProgram(): string[] {
  const here = fileURLToPath(import.meta.url);
  const program = fileURLToPath(new URL(`./run_instance${extname(here)}`, import.meta.url));
  return extname(here) === '.ts' ? ['--import', 'tsx', program] : [program];
}

/**
 * Runs `request` and resolves to the exit status `poptfjs run` ends with: 0
 * when every instance exited with 0, else the first failed instance's status
 * (its code, or 128 + the signal's number), or `mpiexec`'s own when it
 * failed before every instance reported. Bad layouts, a missing `mpiexec`
 * and an output directory that cannot be made are errors before launching.
 */
export async function launchInstances(request: RunRequest, env: NodeJS.ProcessEnv = process.env, streams: LauncherStreams = process): Promise<number> {
  const layout = instanceLayout(request, ipusPerHost(env));
  const mpiexec = detectMpiexec(env);
  let outputDir: string | undefined;
  if (request.outputDir !== undefined) {
    outputDir = resolve(request.outputDir);
    try {
      mkdirSync(outputDir, { recursive: true });
    } catch (error) {
      throw new PoptfjsError(`run: --output-dir ${request.outputDir} cannot be made: ${(error as Error).message}`, { type: 'cli' });
    }
  }
  const config = {
    numInstances: layout.numInstances,
    numReplicas: layout.numReplicas,
    localReplicas: layout.localReplicas,
    ipusPerReplica: layout.ipusPerReplica,
    ...(outputDir === undefined ? {} : { outputDir }),
  };
  const args = [
    ...placementArguments(mpiexec, layout, env),
    ...request.mpiArgs,
    '-n',
    String(layout.numInstances),
    process.execPath,
    ...instanceRunnerProgram(),
    ...instanceRunnerArguments(config, request.command),
  ];
  const child = spawn('mpiexec', args, { env, stdio: ['inherit', 'pipe', 'inherit'] });

  const exits = new Map<number, InstanceExit>();
  let failure: InstanceExit | undefined;
  let killTimer: NodeJS.Timeout | undefined;
  const endInstances = () => {
    child.kill('SIGTERM');
    killTimer ??= setTimeout(() => child.kill('SIGKILL'), TERMINATION_GRACE_MS);
  };
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  process.on('SIGINT', forward).on('SIGTERM', forward);

  const printed = new Promise<void>((done) =>
    createInterface({ input: child.stdout!, crlfDelay: Infinity })
      .on('line', (line) => {
        const exit = readExitReport(line);
        if (exit === undefined) {
          streams.stdout.write(`${line}\n`);
          return;
        }
        exits.set(exit.instance, exit);
        if (failure === undefined && instanceFailed(exit)) {
          failure = exit;
          const others = layout.numInstances > 1 ? '; ending the other instances' : '';
          streams.stderr.write(`poptfjs run: ${describeInstanceExit(exit)}${others}\n`);
          endInstances();
        }
      })
      .on('close', done),
  );
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done, fail) => {
    child.once('error', (error) => fail(new PoptfjsError(`run: mpiexec could not start: ${error.message}`, { type: 'cli' })));
    child.once('exit', (code, signal) => done({ code, signal }));
  });
  try {
    const [mpiexecEnd] = await Promise.all([ended, printed]);
    if (failure !== undefined) return exitStatus(failure);
    const missing = Array.from({ length: layout.numInstances }, (_, i) => i).filter((i) => !exits.has(i));
    if (mpiexecEnd.code === 0 && missing.length === 0) return 0;
    const how = mpiexecEnd.signal !== null ? `was killed by signal ${mpiexecEnd.signal}` : `exited with code ${mpiexecEnd.code}`;
    const unreported = missing.length > 0 ? ` before instance(s) ${missing.join(', ')} reported how they ended` : '';
    streams.stderr.write(`poptfjs run: mpiexec ${how}${unreported}\n`);
    return mpiexecEnd.code || 1;
  } finally {
    clearTimeout(killTimer);
    process.off('SIGINT', forward).off('SIGTERM', forward);
  }
}
