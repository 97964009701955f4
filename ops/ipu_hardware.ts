/**
 * `ipuHardwareIsAvailable` and `ipuHardwareVersion`: PopTorch's questions
 * about the IPU hardware of the system, answered for a simulator.
 */
import { PoptfjsError } from '../lib/common/errors.js';

/**
 * Whether the system has physical IPU hardware with at least `numIpus` IPUs
 * (PopTorch's `ipuHardwareIsAvailable`). Always false: poptfjs runs on
 * simulated IPUs, which are not hardware (the `DeviceManager` lists them, and
 * PopTorch also answers false under its IPU Model). A `numIpus` that is not a
 * positive integer is an error.
 */
export function ipuHardwareIsAvailable(numIpus = 1): boolean {
  if (!Number.isInteger(numIpus) || numIpus < 1) {
    throw new PoptfjsError(`ipuHardwareIsAvailable: numIpus must be a positive integer, got ${String(numIpus)}`, { type: 'device', location: 'ipuHardwareIsAvailable' });
  }
  return false;
}

/**
 * The version of the IPU hardware of the system (PopTorch's
 * `ipuHardwareVersion`: the number in Poplar's architecture name, 2 for
 * `ipu2`, the Mk2 GC200, and 21 for `ipu21`, the Bow IPU). PopTorch raises
 * when the system has no IPU hardware, and so does this, always, since
 * poptfjs has none; the error says how to choose the IPU that is simulated
 * instead (`Options.ipuTarget('GC200' | 'Bow')`, whose devices report their
 * architecture as `device.version`).
 */
export function ipuHardwareVersion(): number {
  throw new PoptfjsError(
    'ipuHardwareVersion: no IPU hardware is available on this system: poptfjs runs on simulated IPUs. ' +
      "Choose the IPU they simulate with Options.ipuTarget('GC200') (ipu2, the default) or Options.ipuTarget('Bow') (ipu21); " +
      'an attached device reports it as device.version',
    { type: 'device', location: 'ipuHardwareVersion' },
  );
}
