/**
 * What `poptfjs run` has `mpiexec` run once per instance, on the instance's
 * host (the program `run_instance.ts`): it takes the instance's index from
 * its MPI rank, runs the user's command with the run's layout in its
 * environment (see `popdist_environment.ts`), prefixes each line the command
 * prints with `[<index>] ` (or writes the lines to
 * `<outputDir>/instance-<index>.log`), and reports how the command ended to
 * the launcher (see `instance_exit.ts`) before exiting with the command's
 * status. The command is the MPI process: it inherits the runner's MPI
 * environment, and MPICH's connection to its process manager (the file
 * descriptor `PMI_FD` names, which a spawned process would not otherwise
 * keep) at the same number, so its `MPI_Init` reaches `mpiexec`.
 */
import { spawn, type StdioOptions } from 'node:child_process';
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { PoptfjsError } from '../common/errors.js';
import { exitReportLine, exitStatus, type InstanceExit } from './instance_exit.js';
import type { InstanceLayout } from './instance_layout.js';
import { mpiProcess } from './mpi_implementation.js';
import { popdistEnvironment } from './popdist_environment.js';

/** What the runner needs to know of the run, given to it as JSON in its first argument. */
export interface InstanceRunnerConfig extends Pick<InstanceLayout, 'numInstances' | 'numReplicas' | 'localReplicas' | 'ipusPerReplica'> {
  /** Where to write each instance's output (absolute), instead of prefixing it. */
  readonly outputDir?: string;
}

/** The runner's arguments: its configuration, `--`, then the command. */
export function instanceRunnerArguments(config: InstanceRunnerConfig, command: readonly string[]): string[] {
  return [JSON.stringify(config), '--', ...command];
}

/** The file instance `index` writes its output to under `outputDir`. */
export function instanceLogFile(outputDir: string, index: number): string {
  return join(outputDir, `instance-${index}.log`);
}

/** The signals the runner passes on to its command, which it then outlives to report how it ended. */
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
  const output = instanceOutput(index, config.outputDir);
  try {
    const exit = await runCommand(index, command, { ...env, ...popdistEnvironment(config, index) }, output);
    process.stdout.write(exitReportLine(exit));
    return exitStatus(exit);
  } finally {
    output.close();
  }
}

/** Where an instance's lines go. */
interface InstanceOutput {
  line(stream: 'stdout' | 'stderr', text: string): void;
  close(): void;
}

function instanceOutput(index: number, outputDir: string | undefined): InstanceOutput {
  if (outputDir === undefined) {
    const streams: Record<'stdout' | 'stderr', Writable> = { stdout: process.stdout, stderr: process.stderr };
    return { line: (stream, text) => streams[stream].write(`[${index}] ${text}\n`), close: () => undefined };
  }
  mkdirSync(outputDir, { recursive: true });
  const fd = openSync(instanceLogFile(outputDir, index), 'w');
  return { line: (_stream, text) => writeSync(fd, `${text}\n`), close: () => closeSync(fd) };
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

/** Runs `command`, passing each line it prints to `output`, and resolves to how it ended. */
function runCommand(index: number, command: readonly string[], env: NodeJS.ProcessEnv, output: InstanceOutput): Promise<InstanceExit> {
  return new Promise((resolve) => {
    const child = spawn(command[0]!, command.slice(1), { env, stdio: commandStdio(env) });
    const forward = (signal: NodeJS.Signals) => child.kill(signal);
    for (const signal of FORWARDED_SIGNALS) process.on(signal, forward);
    const lines = (stream: 'stdout' | 'stderr', input: Readable) =>
      new Promise<void>((done) =>
        createInterface({ input, crlfDelay: Infinity })
          .on('line', (text) => output.line(stream, text))
          .on('close', done),
      );
    const printed = Promise.all([lines('stdout', child.stdout!), lines('stderr', child.stderr!)]);
    let ended = false;
    const finish = (exit: InstanceExit) => {
      if (ended) return;
      ended = true;
      for (const signal of FORWARDED_SIGNALS) process.off(signal, forward);
      void printed.then(() => resolve(exit));
    };
    child.once('error', (error) => finish({ instance: index, code: null, signal: null, startError: `${command[0]} (${error.message})` }));
    child.once('exit', (code, signal) => finish({ instance: index, code, signal }));
  });
}
