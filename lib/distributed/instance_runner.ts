/**
 * What `poptfjs run` has `mpiexec` run once per instance, on the instance's
 * host (the program `run_instance.ts`): it takes the instance's index from
 * its MPI rank, connects to the launcher (see `instance_channel.ts`), runs
 * the user's command with the run's layout in its environment (see
 * `popdist_environment.ts`), sends the launcher each line the command prints
 * (or writes the lines to `<outputDir>/instance-<index>.log`), and reports
 * how the command ended before exiting with the command's status. The
 * command is the MPI process: it inherits the runner's MPI environment, and
 * MPICH's connection to its process manager (the file descriptor `PMI_FD`
 * names, which a spawned process would not otherwise keep) at the same
 * number, so its `MPI_Init` reaches `mpiexec`.
 *
 * SIGINT, SIGTERM and SIGHUP are passed on to the command; a command that
 * has not ended `killAfterMs` after one (it ignores them) is killed
 * (SIGKILL), and so is one whose launcher went away.
 */
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { PoptfjsError } from '../common/errors.js';
import { RunnerChannel, type ChannelAddress, type OutputStream } from './instance_channel.js';
import { exitStatus, type InstanceExit } from './instance_exit.js';
import type { InstanceLayout } from './instance_layout.js';
import { mpiProcess } from './mpi_implementation.js';
import { popdistEnvironment } from './popdist_environment.js';

/** What the runner needs to know of the run, given to it as JSON in its first argument. */
export interface InstanceRunnerConfig extends Pick<InstanceLayout, 'numInstances' | 'numReplicas' | 'localReplicas' | 'ipusPerReplica'> {
  /** Where to write each instance's output (absolute), instead of sending it to the launcher. */
  readonly outputDir?: string;
  /** Where the launcher listens. */
  readonly channel: ChannelAddress;
  /** How long a command has to end after a signal before it is killed. */
  readonly killAfterMs: number;
}
/** The runner's arguments: its configuration, `--`, then the command. */
export function instanceRunnerArguments(config: InstanceRunnerConfig, command: readonly string[]): string[] {
  return [JSON.stringify(config), '--', ...command];
}

/** The file instance `index` writes its output to under `outputDir`. */
export function instanceLogFile(outputDir: string, index: number): string {
  return join(outputDir, `instance-${index}.log`);
}

/** The signals the runner passes on to its command (then kills it if it ignores them), which it outlives to report how it ended. */
const FORWARDED_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/**
 * Runs the command of `argv` (the runner's arguments) as instance `rank` of
 * the MPI processes, and resolves to the exit status the runner should end
 * with.
 */
export async function runInstance(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const [configText, separator, ...command] = argv;
  if (configText === undefined || separator !== '--' || command.length === 0) {
    throw new PoptfjsError('instance runner: expected <config JSON> -- <command> [args...]', { type: 'distributed' });
  }
  const config = JSON.parse(configText) as InstanceRunnerConfig;
  const placed = mpiProcess(env);
  if (placed === undefined) throw new PoptfjsError('instance runner: no MPI rank in the environment: poptfjs run starts it through mpiexec', { type: 'distributed' });
  if (placed.size !== config.numInstances) {
    throw new PoptfjsError(`instance runner: mpiexec started ${placed.size} processes for ${config.numInstances} instances (do the MPI arguments set a process count?)`, {
      type: 'distributed',
    });
  }
  const index = placed.rank;
  let ended: (() => void) | undefined;
  const channel = await RunnerChannel.connect(config.channel, index, () => ended?.());
  const output = instanceOutput(channel, index, config.outputDir);
  try {
    const exit = await runCommand(index, command, { ...env, ...popdistEnvironment(config, index) }, output, config.killAfterMs, (end) => {
      ended = end;
    });
    await channel.finish(exit);
    return exitStatus(exit);
  } finally {
    output.close();
  }
}

/** Where an instance's lines go. */
interface InstanceOutput {
  /** Takes a line; a promise, when there is one, resolves when it can take more. */
  line(stream: OutputStream, text: string): Promise<void> | undefined;
  close(): void;
}

function instanceOutput(channel: RunnerChannel, index: number, outputDir: string | undefined): InstanceOutput {
  if (outputDir === undefined) return { line: (stream, text) => channel.line(stream, text), close: () => undefined };
  mkdirSync(outputDir, { recursive: true });
  const fd = openSync(instanceLogFile(outputDir, index), 'w');
  return {
    line: (_stream, text) => {
      writeSync(fd, `${text}\n`);
      return undefined;
    },
    close: () => closeSync(fd),
  };
}

/** The command's standard streams (its output piped to the runner), and the PMI connection of MPICH at its number. */
function commandStdio(env: NodeJS.ProcessEnv): StdioOptions {
  const stdio: Array<'inherit' | 'pipe' | 'ignore' | number> = ['inherit', 'pipe', 'pipe'];
  const pmiFd = Number(env.PMI_FD);
  if (env.PMI_FD !== undefined && Number.isInteger(pmiFd) && pmiFd >= stdio.length) {
    while (stdio.length < pmiFd) stdio.push('ignore');
    stdio.push(pmiFd);
  }
  return stdio;
}

/** Sends `signal` to `child`, then SIGKILL if it has not ended `killAfterMs` later. */
function signalThenKill(child: ChildProcess, signal: NodeJS.Signals, killAfterMs: number, timers: Set<NodeJS.Timeout>): void {
  child.kill(signal);
  timers.add(setTimeout(() => child.kill('SIGKILL'), killAfterMs));
}

/**
 * Runs `command`, passing each line it prints to `output`, and resolves to
 * how it ended; `onEnd` is given the function that ends it (SIGTERM, then
 * SIGKILL), for when the launcher goes away.
 */
function runCommand(
  index: number,
  command: readonly string[],
  env: NodeJS.ProcessEnv,
  output: InstanceOutput,
  killAfterMs: number,
  onEnd: (end: () => void) => void,
): Promise<InstanceExit> {
  return new Promise((resolve) => {
    const child = spawn(command[0]!, command.slice(1), { env, stdio: commandStdio(env) });
    const timers = new Set<NodeJS.Timeout>();
    let ended = false;
    // Kept after the command ended: a signal then must not end the runner before it has reported.
    const forward = (signal: NodeJS.Signals) => {
      if (!ended) signalThenKill(child, signal, killAfterMs, timers);
    };
    for (const signal of FORWARDED_SIGNALS) process.on(signal, forward);
    onEnd(() => forward('SIGTERM'));
    const lines = (stream: OutputStream, input: Readable) =>
      new Promise<void>((done) =>
        createInterface({ input, crlfDelay: Infinity })
          .on('line', (text) => {
            const more = output.line(stream, text);
            if (more) {
              input.pause();
              void more.then(() => input.resume());
            }
          })
          .on('close', done),
      );
    const printed = Promise.all([lines('stdout', child.stdout!), lines('stderr', child.stderr!)]);
    const finish = (exit: InstanceExit) => {
      if (ended) return;
      ended = true;
      for (const timer of timers) clearTimeout(timer);
      void printed.then(() => resolve(exit));
    };
    child.once('error', (error) => finish({ instance: index, code: null, signal: null, startError: `${command[0]} (${error.message})` }));
    child.once('exit', (code, signal) => finish({ instance: index, code, signal }));
  });
}
