/**
 * Frozen options: once a model wrapper or a `DataLoader` holds an `Options`,
 * the options (and the execution strategy they hold) can no longer change;
 * every setter then throws one of the errors made here.
 */
import { PoptfjsError } from '../common/errors.js';

/** Throws {@link frozenOptionsError} for `method` when the owner is frozen; does nothing otherwise. */
export type MutationGuard = (method: string) => void;

/** The error a setter of frozen options throws; `method` names the setter, e.g. `Options.deviceIterations`. */
export function frozenOptionsError(method: string): PoptfjsError {
  return new PoptfjsError(
    `${method}: these options are frozen (a wrapped model or a DataLoader uses them) and can no longer change; call clone() on the options and change the copy instead`,
    { type: 'options' },
  );
}

/** The error a setter of a strategy, phase or stage held by frozen options throws. */
export function frozenStrategyError(method: string): PoptfjsError {
  return new PoptfjsError(
    `${method}: this execution strategy belongs to frozen options (a wrapped model or a DataLoader uses them) and can no longer change; ` +
      'call clone() on the options and change the strategy of the copy instead',
    { type: 'options' },
  );
}
