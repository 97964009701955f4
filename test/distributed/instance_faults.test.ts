import { describe, expect, it } from 'vitest';
import { runProgram } from '../run_program.js';
import { mpiRun } from './mpi_run.js';

const SCRIPT = 'test/distributed/scripts/fault.ts';

describe('faults in a run of 2 instances', () => {
  it('a recoverable fault on instance 1 fails the same step on both with the same RecoverableError; both recover to the weights of the undisturbed run', async () => {
    const run = await mpiRun(SCRIPT, 2, ['recoverable']);
    expect(run.status, run.stderr).toBe(0);
    expect(run.byRank).toHaveLength(2);
    const message =
      "instance 1 of 2 had a device fault in iteration 6: no instance applied its update and every instance's device lost its state; " +
      'recover with IPU_RESET on every instance (detachFromDevice() and attachToDevice()) and resume from the same checkpoint';
    const shared = { step: 6, type: 'poplar_recoverable_runtime_error', message, recoveryAction: 'IPU_RESET', pendingRecovery: 'IPU_RESET' };
    // Instance 0's device had no fault of its own: it lost its state with instance 1's.
    expect(run.byRank[0]!.faults).toEqual([shared]);
    expect(run.byRank[1]!.faults).toEqual([{ ...shared, cause: 'simulated IPU_RESET at B0 on IPU 0, tile 0: recover with IPU_RESET' }]);
    const undisturbed = run.byRank[0]!.undisturbed as number[];
    expect(undisturbed).toHaveLength(6 * 8 + 8 + 8 * 2 + 2);
    for (const result of run.byRank) {
      expect(result!.undisturbed).toEqual(undisturbed);
      expect(result!.recovered).toEqual(undisturbed);
    }
  }, 120_000);

  it('an unrecoverable fault on instance 1 stops both at the same step: instance 1 raises its fault, instance 0 an error naming it', async () => {
    const run = await mpiRun(SCRIPT, 2, ['unrecoverable']);
    expect(run.status, run.stderr).toBe(0);
    expect(run.byRank).toEqual([
      { rank: 0, faults: [{ step: 2, type: 'distributed', message: 'instance 1 of 2 failed in iteration 2; the run cannot go on' }] },
      {
        rank: 1,
        faults: [{ step: 2, type: 'poplar_unrecoverable_runtime_error', message: 'simulated MEMORY_ERROR at B0 on IPU 0, tile 0: the device must be taken out of service' }],
      },
    ]);
  }, 120_000);

  it('npx poptfjs run reports an instance killed mid-training, ends the other and exits with 128 + SIGKILL', () => {
    const { status, stdout, stderr } = runProgram(
      'bin/poptfjs.ts',
      ['run', '--num-instances', '2', '--num-replicas', '2', '--', process.execPath, '--import', 'tsx', SCRIPT, 'killed'],
      {},
      120_000,
    );
    expect(stderr).toContain('poptfjs run: instance 1 was killed by signal SIGKILL; ending the other instances\n');
    expect(status).toBe(128 + 9);
    // Neither instance finished training.
    expect(stdout).not.toContain('{"rank"');
  }, 120_000);
});
