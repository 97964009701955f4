/**
 * A training iteration that fails on one instance of a multi-instance run
 * fails on every instance. Before the gradients of an iteration are summed,
 * each instance contributes its status to an all-reduce of one slot per
 * instance: 0 when its part ran, 1 + the rank of the recovery in
 * {@link RECOVERIES} for a recoverable fault, {@link FAILED} for any other
 * error. Every instance then reads the same statuses and raises the same
 * error for the iteration:
 *
 * - when every failure is recoverable, the same `RecoverableError` on every
 *   instance, asking for the strongest recovery any instance needs: no
 *   instance applies the iteration's update, every device counts as having
 *   lost its state (the executor marks it), and every instance recovers as
 *   after a fault of its own (`detachFromDevice()`, `attachToDevice()`) and
 *   resumes from the same checkpoint;
 * - otherwise the failed instance raises its own error and the others a
 *   `PoptfjsError` naming it (the run cannot go on; `poptfjs run` ends the
 *   instances when one exits with an error).
 */
import { PoptfjsError, RecoverableError, type RecoveryAction } from '../common/errors.js';

/** The recovery actions, weakest first: an iteration failed on several instances needs the strongest of theirs. */
const RECOVERIES: readonly RecoveryAction[] = ['IPU_RESET', 'LINK_RESET', 'PARTITION_RESET', 'FULL_RESET'];

/** The status of an instance whose part failed with an error that is not recoverable. */
const FAILED = RECOVERIES.length + 1;

/** The status an instance contributes for its part of an iteration (`failure`: what it threw, if anything). */
export function iterationStatus(failure: { readonly error: unknown } | undefined): number {
  if (!failure) return 0;
  return failure.error instanceof RecoverableError ? 1 + RECOVERIES.indexOf(failure.error.recoveryAction) : FAILED;
}

/** "instance 1", "instances 0 and 2", "instances 0, 1 and 3". */
function instanceList(ranks: readonly number[]): string {
  if (ranks.length === 1) return `instance ${ranks[0]}`;
  return `instances ${ranks.slice(0, -1).join(', ')} and ${ranks[ranks.length - 1]}`;
}

/**
 * The error an instance raises for iteration `iteration` given every
 * instance's status (`failure`: what this instance threw, if anything), or
 * undefined when no instance failed.
 */
export function iterationFailure(statuses: ArrayLike<number>, iteration: number, failure: { readonly error: unknown } | undefined): Error | undefined {
  const failed = Array.from(statuses, (status, r) => (status !== 0 ? r : -1)).filter((r) => r >= 0);
  if (failed.length === 0) return undefined;
  const of = `of ${statuses.length}`;
  if (failed.some((r) => statuses[r] === FAILED)) {
    if (failure) return failure.error instanceof Error ? failure.error : new PoptfjsError(String(failure.error), { type: 'runtime' });
    const broken = failed.filter((r) => statuses[r] === FAILED);
    return new PoptfjsError(`${instanceList(broken)} ${of} failed in iteration ${iteration}; the run cannot go on`, { type: 'distributed' });
  }
  const action = RECOVERIES[Math.max(...failed.map((r) => statuses[r]!)) - 1]!;
  const message =
    `${instanceList(failed)} ${of} had a device fault in iteration ${iteration}: no instance applied its update and every instance's device lost its state; ` +
    `recover with ${action} on every instance (detachFromDevice() and attachToDevice()) and resume from the same checkpoint`;
  return new RecoverableError(message, action, failure ? { cause: failure.error } : {});
}
