import { describe, expect, it } from 'vitest';
import { iterationFailure, iterationStatus } from '../../lib/distributed/iteration_failure.js';
import { PoptfjsError, RecoverableError, UnrecoverableError } from '../../lib/common/errors.js';

const fault = (action: 'IPU_RESET' | 'LINK_RESET' | 'PARTITION_RESET' | 'FULL_RESET') => ({ error: new RecoverableError(`simulated ${action}`, action) });

describe('the failure of an iteration shared by the instances', () => {
  it('is nothing when every instance ran its part', () => {
    expect(iterationStatus(undefined)).toBe(0);
    expect(iterationFailure([0, 0, 0], 4, undefined)).toBeUndefined();
  });

  it('asks every instance for the strongest recovery any instance needs, naming the instances that failed', () => {
    const statuses = [iterationStatus(fault('LINK_RESET')), iterationStatus(undefined), iterationStatus(fault('IPU_RESET')), iterationStatus(fault('PARTITION_RESET'))];
    const own = fault('LINK_RESET');
    const onFailed = iterationFailure(statuses, 9, own) as RecoverableError;
    const onHealthy = iterationFailure(statuses, 9, undefined) as RecoverableError;
    for (const error of [onFailed, onHealthy]) {
      expect(error).toBeInstanceOf(RecoverableError);
      expect(error.recoveryAction).toBe('PARTITION_RESET');
      expect(error.message).toBe(
        "instances 0, 2 and 3 of 4 had a device fault in iteration 9: no instance applied its update and every instance's device lost its state; " +
          'recover with PARTITION_RESET on every instance (detachFromDevice() and attachToDevice()) and resume from the same checkpoint',
      );
    }
    expect(onFailed.cause).toBe(own.error);
    expect(onHealthy.cause).toBeUndefined();
  });

  it("is the failed instance's own error when it is not recoverable, and an error naming it on the others", () => {
    const own = { error: new UnrecoverableError('simulated MEMORY_ERROR') };
    const statuses = [iterationStatus(undefined), iterationStatus(own), iterationStatus(fault('IPU_RESET'))];
    expect(iterationFailure(statuses, 3, own)).toBe(own.error);
    const other = iterationFailure(statuses, 3, undefined)!;
    expect(other).toBeInstanceOf(PoptfjsError);
    expect(other.message).toBe('instance 1 of 3 failed in iteration 3; the run cannot go on');
    // An instance whose own fault was recoverable also stops: the step cannot be recovered everywhere.
    expect(iterationFailure(statuses, 3, fault('IPU_RESET'))!.message).toBe('simulated IPU_RESET');
  });
});
