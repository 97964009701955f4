/**
 * `poptfjs run --num-instances N --num-replicas R [...] -- <command>`: runs
 * `<command>` as N instances of a data-parallel run through the system's
 * `mpiexec`, as PopRun does (see `lib/distributed/launcher.ts`).
 */
import { join } from 'node:path';
import { launchInstances } from '../lib/distributed/launcher.js';
import { shellWords } from '../lib/distributed/shell_words.js';
import { UsageError, type VerbArguments } from './cli_arguments.js';

/** Runs `poptfjs run` with its checked arguments and resolves to its exit status. */
export async function runCommand(args: VerbArguments): Promise<number> {
  const host = args.string('host');
  const hosts = host?.split(',').map((h) => h.trim());
  if (hosts?.some((h) => h === '')) throw new UsageError(`--host takes a comma-separated list of host names, got '${host}'`);
  const mpiArgs = args.string('mpi-args');
  const outputDir = args.string('output-dir');
  if (outputDir !== undefined) console.error(`poptfjs run: writing each instance's output to ${join(outputDir, 'instance-<i>.log')}`);
  return launchInstances({
    numInstances: args.integer('num-instances')!,
    numReplicas: args.integer('num-replicas')!,
    ipusPerReplica: args.integer('ipus-per-replica') ?? 1,
    ...(hosts === undefined ? {} : { hosts }),
    mpiArgs: mpiArgs === undefined ? [] : shellWords(mpiArgs, 'run: --mpi-args'),
    ...(outputDir === undefined ? {} : { outputDir }),
    ...(args.integer('kill-after') === undefined ? {} : { killAfterMs: args.integer('kill-after')! * 1000 }),
    command: args.command,
  });
}
