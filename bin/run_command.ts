/**
 * `poptfjs run --num-instances N --num-replicas R [...] -- <command>`: runs
 * `<command>` as N instances of a data-parallel run through the system's
 * `mpiexec`, as PopRun does (see `lib/distributed/launcher.ts`).
 */
import { parseArgs } from 'node:util';
import { PoptfjsError } from '../lib/common/errors.js';
import { launchInstances } from '../lib/distributed/launcher.js';
import { shellWords } from '../lib/distributed/shell_words.js';

/** The help text of the verb. */
export const RUN_USAGE = `poptfjs run --num-instances N --num-replicas R [options] -- <command> [args...]
  runs <command> as N instances (host processes) of a data-parallel run of R
  replicas in all, through the system's mpiexec (MPICH or Open MPI), as PopRun
  does; each instance finds the layout with poptfjs's popdist API

  --num-instances N      instances to run (required)
  --num-replicas R       replicas over all instances, R/N each (required)
  --ipus-per-replica K   IPUs each replica uses (default 1); each host's
                         instances may use up to POPTFJS_NUM_IPUS IPUs (default 16)
  --host h1,h2,...       hosts to run on, the instances split over them in
                         blocks (default: this host)
  --mpi-args "..."       more arguments for mpiexec
  --output-dir DIR       write instance i's output to DIR/instance-<i>.log
                         instead of prefixing its lines with [<i>]
  --kill-after S         seconds an instance has to end after SIGTERM, SIGINT
                         or SIGHUP before it is killed (default 5)

  The first instance to fail ends the others; poptfjs run then exits with its
  status. SIGINT and SIGTERM are passed on to the instances, and SIGHUP ends
  the run as SIGTERM does.`;

function cliError(message: string): PoptfjsError {
  return new PoptfjsError(`run: ${message}`, { type: 'cli' });
}

function positiveInteger(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < 1) throw cliError(`${flag} takes a positive integer, got '${value}'`);
  return Number(value);
}

function seconds(value: string, flag: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0 || n > 3600) throw cliError(`${flag} takes seconds from 0 to 3600, got '${value}'`);
  return n;
}

/** Runs `poptfjs run` with the arguments after the verb and resolves to its exit status. */
export async function runCommand(args: string[]): Promise<number> {
  const separator = args.indexOf('--');
  const command = separator < 0 ? [] : args.slice(separator + 1);
  const flags = separator < 0 ? args : args.slice(0, separator);
  // The value of --mpi-args starts with a dash more often than not: take it whole, as --mpi-args=...
  const mpiArgs = flags.indexOf('--mpi-args');
  if (mpiArgs >= 0 && mpiArgs + 1 < flags.length) flags.splice(mpiArgs, 2, `--mpi-args=${flags[mpiArgs + 1]}`);
  let values: ReturnType<typeof parse>['values'];
  try {
    values = parse(flags).values;
  } catch (error) {
    throw cliError(`${(error as Error).message}\n${RUN_USAGE}`);
  }
  const numInstances = positiveInteger(values['num-instances'], '--num-instances');
  if (numInstances === undefined) throw cliError('give the number of instances: --num-instances N');
  const numReplicas = positiveInteger(values['num-replicas'], '--num-replicas');
  if (numReplicas === undefined) throw cliError('give the number of replicas over all instances: --num-replicas R');
  if (command.length === 0) throw cliError('give the command each instance runs after --, e.g. poptfjs run --num-instances 2 --num-replicas 2 -- node train.js');
  const hosts = values.host?.split(',').map((h) => h.trim());
  if (hosts?.some((h) => h === '')) throw cliError(`--host takes a comma-separated list of host names, got '${values.host}'`);
  return launchInstances({
    numInstances,
    numReplicas,
    ipusPerReplica: positiveInteger(values['ipus-per-replica'], '--ipus-per-replica') ?? 1,
    ...(hosts === undefined ? {} : { hosts }),
    mpiArgs: values['mpi-args'] === undefined ? [] : shellWords(values['mpi-args'], 'run: --mpi-args'),
    ...(values['output-dir'] === undefined ? {} : { outputDir: values['output-dir'] }),
    ...(values['kill-after'] === undefined ? {} : { killAfterMs: seconds(values['kill-after'], '--kill-after') * 1000 }),
    command,
  });
}

function parse(args: string[]) {
  return parseArgs({
    args,
    options: {
      'num-instances': { type: 'string' },
      'num-replicas': { type: 'string' },
      'ipus-per-replica': { type: 'string' },
      host: { type: 'string' },
      'mpi-args': { type: 'string' },
      'output-dir': { type: 'string' },
      'kill-after': { type: 'string' },
    },
  });
}
