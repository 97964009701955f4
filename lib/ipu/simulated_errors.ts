/**
 * Simulated device faults, as Poplar's `Engine::insertSimulatedError`: an
 * error planted at a location (a program or kernel on a tile of an IPU) is
 * raised when a run reaches it. Codes map to the errors a real fault gives.
 */
import { RecoverableError, UnrecoverableError, type PoptfjsError, type RecoveryAction } from '../common/errors.js';

/** The faults that can be simulated. */
export const SimulatedErrorCode = {
  /** The IPU must be reset (RecoverableError, IPU_RESET). */
  IPU_RESET: 'IPU_RESET',
  /** The IPU-Links must be reset (RecoverableError, LINK_RESET). */
  LINK_RESET: 'LINK_RESET',
  /** The IPU partition must be reset (RecoverableError, PARTITION_RESET). */
  PARTITION_RESET: 'PARTITION_RESET',
  /** The system must be power-cycled (RecoverableError, FULL_RESET). */
  FULL_RESET: 'FULL_RESET',
  /** A memory parity error: the IPU must be taken out of service (UnrecoverableError). */
  MEMORY_ERROR: 'MEMORY_ERROR',
  /** A hardware exception on a tile (UnrecoverableError). */
  EXCEPTION: 'EXCEPTION',
} as const;
/** A member of {@link SimulatedErrorCode}. */
export type SimulatedErrorCode = (typeof SimulatedErrorCode)[keyof typeof SimulatedErrorCode];

/** Where a fault is simulated: a program (`F1`, `B0`) or kernel (`MatMul`) on a tile. */
export interface ErrorLocation {
  /** The program: a unit of the schedule (`F<stage>`, `B<stage>`) or a kernel name. */
  readonly program: string;
  /** The IPU of the device (0-based within the device). */
  readonly ipu: number;
  /** The tile, numbered across the device: `[0, numIpus × tilesPerIpu)`. */
  readonly tile: number;
}

const RECOVERY: Partial<Record<SimulatedErrorCode, RecoveryAction>> = {
  IPU_RESET: 'IPU_RESET',
  LINK_RESET: 'LINK_RESET',
  PARTITION_RESET: 'PARTITION_RESET',
  FULL_RESET: 'FULL_RESET',
};

/** The error a simulated fault raises: its `errors` hold the one simulated error, at `location` (the object planted). */
export function simulatedFault(code: SimulatedErrorCode, location: ErrorLocation): PoptfjsError {
  const where = `${location.program} on IPU ${location.ipu}, tile ${location.tile}`;
  const action = RECOVERY[code];
  const errors = [{ code, isSimulated: true, location }];
  if (action) return new RecoverableError(`simulated ${code} at ${where}: recover with ${action}`, action, { location: where, errors });
  return new UnrecoverableError(`simulated ${code} at ${where}: the device must be taken out of service`, { location: where, errors });
}

/** True if the two locations are the same. */
export function sameLocation(a: ErrorLocation, b: ErrorLocation): boolean {
  return a.program === b.program && a.ipu === b.ipu && a.tile === b.tile;
}
