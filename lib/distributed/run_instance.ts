/**
 * The program `poptfjs run` has `mpiexec` start for each instance:
 * `node run_instance.js '<config JSON>' -- <command> [args...]` (see
 * `instance_runner.ts`). It exits with the command's status; an error of its
 * own (no MPI rank, a process count that is not the run's) is printed and
 * exits 1.
 */
import { PoptfjsError } from '../common/errors.js';
import { runInstance } from './instance_runner.js';

try {
  process.exitCode = await runInstance(process.argv.slice(2));
} catch (error) {
  if (!(error instanceof PoptfjsError)) throw error;
  console.error(`poptfjs run: ${error.message}`);
  process.exitCode = 1;
}
