/**
 * Poplar's `TimerTimePoint` (`Engine.getTimeStamp()`) and
 * `Engine.reportTiming(start, end)`: a record of the host's clock and the
 * simulated device's, and the report of the interval between two of them.
 * The device's clock counts the tile clock cycles of the programs the engine
 * ran since it was loaded (each program's simulated cycles).
 */
import { PoptfjsError } from '../common/errors.js';

/** A record of the current host and device time, from `Engine.getTimeStamp()`. */
export interface TimerTimePoint {
  /** The host's clock, in nanoseconds (`process.hrtime`). */
  readonly hostNanoseconds: bigint;
  /** Tile clock cycles the device had run when the time was taken. */
  readonly deviceCycles: number;
  /** The device's tile clock, in Hz. */
  readonly clockHz: number;
  /** The engine the time was taken on, so that two times of different engines are not compared. */
  readonly engine: object;
}

/**
 * The timing report of the interval from `start` to `end`: the device cycles
 * and their simulated time at the tile clock, and the host's time.
 */
export function reportTiming(start: TimerTimePoint, end: TimerTimePoint): string {
  if (start.engine !== end.engine) throw new PoptfjsError('reportTiming: the two times were taken on different engines', { type: 'engine' });
  const cycles = end.deviceCycles - start.deviceCycles;
  if (cycles < 0) throw new PoptfjsError('reportTiming: the end was taken before the start', { type: 'engine' });
  const deviceMs = (cycles / start.clockHz) * 1e3;
  const hostMs = Number(end.hostNanoseconds - start.hostNanoseconds) / 1e6;
  return `Device: ${cycles} cycles, ${deviceMs.toFixed(6)} ms at ${(start.clockHz / 1e6).toFixed(1)} MHz (simulated)\nHost: ${hostMs.toFixed(3)} ms\n`;
}
