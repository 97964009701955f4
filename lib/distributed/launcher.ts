/**
 * `poptfjs run`: launches the instances of a multi-instance run through the
 * system's `mpiexec` (MPICH or Open MPI), as PopRun does.
 *
 * The layout is checked before anything starts (see `instance_layout.ts`).
 * `mpiexec` starts the instance runner (`run_instance.ts`) once per instance,
 * placed on the hosts in blocks; each runner connects back to the launcher
 * (see `instance_channel.ts`), runs the command with the layout in its
 * environment under PopDist's names, sends each line the command prints,
 * which the launcher prints whole with the instance's `[<i>] ` prefix, and
 * reports how the command ended. The first instance to fail (an exit code
 * other than 0, a signal, a command that cannot start) ends the run: the
 * launcher says which instance failed and why, has `mpiexec` end the others
 * (SIGTERM, which the runners pass on, then SIGKILL from the runners after
 * the run's `killAfterMs`), and exits with the failed instance's status.
 *
 * SIGINT and SIGTERM sent to the launcher are passed on to the instances
 * the same way, and SIGHUP (its terminal closed) ends the run as SIGTERM
 * does. Should `mpiexec` itself not end within twice `killAfterMs`, it is
 * killed, and its process managers kill what is left.
 */
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { hostname } from 'node:os';
import { extname, resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { PoptfjsError } from '../common/errors.js';
import { LauncherChannel } from './instance_channel.js';
import { describeInstanceExit, exitStatus, instanceFailed, type InstanceExit } from './instance_exit.js';
import { instanceLayout, LOCAL_HOST, type InstanceLayoutRequest } from './instance_layout.js';
import { instanceRunnerArguments, type InstanceRunnerConfig } from './instance_runner.js';
import { detectMpiexec, placementArguments } from './mpi_implementation.js';

/** What `poptfjs run` is asked to do. */
export interface RunRequest extends InstanceLayoutRequest {
  /** More arguments for `mpiexec` (`--mpi-args`), placed before the program. */
  readonly mpiArgs: readonly string[];
  /** Write instance `i`'s output to `<outputDir>/instance-<i>.log` instead of prefixing it with `[<i>] `. */
  readonly outputDir?: string;
  /** How long an instance has to end after SIGTERM (or SIGINT, SIGHUP) before it is killed; default {@link DEFAULT_KILL_AFTER_MS}. */
  readonly killAfterMs?: number;
  /** The command each instance runs, and its arguments. */
  readonly command: readonly string[];
}

/** Where the launcher prints: the instances' standard output, and its own reports. */
export interface LauncherStreams {
  readonly stdout: Writable;
  readonly stderr: Writable;
}

/** How long instances have to end after SIGTERM before they are killed, unless the request says. */
export const DEFAULT_KILL_AFTER_MS = 5_000;

/** The names by which a run's hosts are this host: a run on them alone is reached over the loopback interface. */
function isThisHost(name: string): boolean {
  return name === LOCAL_HOST || name === '127.0.0.1' || name === '::1' || name === hostname();
}

/** The simulated IPUs of each host when `POPTFJS_NUM_IPUS` is not set. */
const DEFAULT_IPUS_PER_HOST = 16;

/** The signals the launcher handles: SIGINT and SIGTERM are passed on to the instances, SIGHUP ends the run as SIGTERM. */
const HANDLED_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

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
  const killAfterMs = request.killAfterMs ?? DEFAULT_KILL_AFTER_MS;
  const exits = new Map<number, InstanceExit>();
  let failure: InstanceExit | undefined;
  let endInstances: () => void = () => undefined;
  const write = (stream: Writable, text: string): Promise<void> | undefined =>
    stream.write(text) ? undefined : new Promise<void>((done) => stream.once('drain', () => done()));
  const local = layout.hosts.every((host) => isThisHost(host.name));
  const channel = await LauncherChannel.open(local ? '127.0.0.1' : '0.0.0.0', local ? '127.0.0.1' : hostname(), {
    line: (instance, stream, line) => write(stream === 'stderr' ? streams.stderr : streams.stdout, `[${instance}] ${line}\n`),
    exit: (exit) => {
      exits.set(exit.instance, exit);
      if (failure === undefined && instanceFailed(exit)) {
        failure = exit;
        const others = layout.numInstances > 1 ? '; ending the other instances' : '';
        streams.stderr.write(`poptfjs run: ${describeInstanceExit(exit)}${others}\n`);
        endInstances();
      }
    },
  });
  const config: InstanceRunnerConfig = {
    numInstances: layout.numInstances,
    numReplicas: layout.numReplicas,
    localReplicas: layout.localReplicas,
    ipusPerReplica: layout.ipusPerReplica,
    ...(outputDir === undefined ? {} : { outputDir }),
    channel: channel.address,
    killAfterMs,
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
  const child = spawn('mpiexec', args, { env, stdio: 'inherit' });

  let killTimer: NodeJS.Timeout | undefined;
  /** Passes `signal` on through mpiexec, and kills mpiexec should the run not end in twice the time the runners give their commands. */
  const signalInstances = (signal: NodeJS.Signals) => {
    child.kill(signal);
    killTimer ??= setTimeout(() => child.kill('SIGKILL'), 2 * killAfterMs);
  };
  endInstances = () => signalInstances('SIGTERM');
  const forward = (signal: NodeJS.Signals) => signalInstances(signal === 'SIGHUP' ? 'SIGTERM' : signal);
  for (const signal of HANDLED_SIGNALS) process.on(signal, forward);

  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done, fail) => {
    child.once('error', (error) => fail(new PoptfjsError(`run: mpiexec could not start: ${error.message}`, { type: 'cli' })));
    child.once('exit', (code, signal) => done({ code, signal }));
  });
  try {
    const mpiexecEnd = await ended;
    // What the runners sent before they ended is read in full; a runner left behind (its mpiexec killed) is not waited for long.
    await channel.drain(killAfterMs);
    if (failure !== undefined) return exitStatus(failure);
    const missing = Array.from({ length: layout.numInstances }, (_, i) => i).filter((i) => !exits.has(i));
    if (mpiexecEnd.code === 0 && missing.length === 0) return 0;
    const how = mpiexecEnd.signal !== null ? `was killed by signal ${mpiexecEnd.signal}` : `exited with code ${mpiexecEnd.code}`;
    const unreported = missing.length > 0 ? ` before instance(s) ${missing.join(', ')} reported how they ended` : '';
    streams.stderr.write(`poptfjs run: mpiexec ${how}${unreported}\n`);
    return mpiexecEnd.code || 1;
  } finally {
    clearTimeout(killTimer);
    channel.close();
    for (const signal of HANDLED_SIGNALS) process.off(signal, forward);
  }
}
