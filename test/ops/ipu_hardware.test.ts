/**
 * `ops.ipuHardwareIsAvailable` and `ops.ipuHardwareVersion` on a system whose IPUs are simulated.
 */
import { describe, expect, it } from 'vitest';
import { BOW, DeviceManager, PoptfjsError, ops } from 'poptfjs';

describe('IPU hardware', () => {
  it('is never available: the IPUs the device manager lists are simulated', () => {
    expect(new DeviceManager().enumerateDevices().length).toBeGreaterThan(0);
    expect(ops.ipuHardwareIsAvailable()).toBe(false);
    expect(ops.ipuHardwareIsAvailable(4)).toBe(false);
  });

  it('has no version: asking raises as PopTorch does without hardware, naming the simulated targets', () => {
    expect(() => ops.ipuHardwareVersion()).toThrow(PoptfjsError);
    expect(() => ops.ipuHardwareVersion()).toThrow(
      /^ipuHardwareVersion: no IPU hardware is available on this system: poptfjs runs on simulated IPUs\. Choose the IPU they simulate with Options\.ipuTarget\('GC200'\) \(ipu2, the default\) or Options\.ipuTarget\('Bow'\) \(ipu21\)/,
    );
  });

  it('the simulated devices report the architectures the message names', () => {
    const manager = new DeviceManager();
    expect(manager.createIpuModelDevice().version).toBe('ipu2');
    expect(manager.createIpuModelDevice({ ...BOW }).version).toBe('ipu21');
  });

  it('refuses a number of IPUs that is not a positive integer', () => {
    expect(() => ops.ipuHardwareIsAvailable(0)).toThrow('ipuHardwareIsAvailable: numIpus must be a positive integer, got 0');
    expect(() => ops.ipuHardwareIsAvailable(1.5)).toThrow('ipuHardwareIsAvailable: numIpus must be a positive integer, got 1.5');
  });
});
