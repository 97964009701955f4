/**
 * The device an engine runs on: bound to the executable (its IPUs must be
 * enough), attached and detached, told which programs run where so
 * simulated faults can be planted and hit; and for an executor, chosen from
 * the options (an offline target, the IPU Model, or simulated IPUs acquired
 * from the `DeviceManager`).
 */
import { PoptfjsError } from '../common/errors.js';
import type { Device } from '../ipu/device.js';
import { DeviceManager } from '../ipu/device_manager.js';
import type { OptionsSettings } from '../options/options_settings.js';
import type { Executable } from '../executable/executable.js';
import type { RunObserver } from '../runtime/run_observer.js';
import { programPlacements, unitPrograms, type UnitPrograms } from './program_locations.js';

/** The device of an engine and the programs loaded on it. */
export class DeviceBinding {
  /** Programs reached by each unit on each device IPU: `units[unit][replica]` maps device IPU → program names. */
  private readonly units: UnitPrograms;

  private constructor(
    readonly device: Device,
    executable: Executable,
  ) {
    this.units = unitPrograms(executable);
    device.loadPrograms(programPlacements(this.units));
  }

  /** Binds an executable to a given device (the Session API's `deviceInfo`), attaching it when `connectionType` is `Always`. */
  static bind(device: Device, executable: Executable, connectionType: OptionsSettings['connectionType'] = device.connectionType): DeviceBinding {
    const needed = executable.placement.ipusReserved;
    if (device.kind !== 'Cpu' && device.numIpus < needed) {
      throw new PoptfjsError(`the model needs ${needed} IPU(s) but device ${device.id} has ${device.numIpus}`, { type: 'device' });
    }
    const binding = new DeviceBinding(device, executable);
    if (connectionType === 'Always' && device.canRun) device.attach();
    return binding;
  }

  /**
   * True when an executor must attach before its next run: its device can run
   * and is detached, and the connection type is `Always` or `OnDemand` — as
   * PopTorch attaches a detached executor again on its next call.
   */
  needsAttach(connectionType: OptionsSettings['connectionType']): boolean {
    return this.device.canRun && !this.device.isAttached && connectionType !== 'Never';
  }

  /** Makes sure the device can run now: attaches an on-demand device; explains an offline, detached or faulted one. */
  readyToRun(connectionType: OptionsSettings['connectionType']): void {
    const { device } = this;
    if (!device.canRun) {
      throw new PoptfjsError('the model was compiled for an offline IPU target (useOfflineIpuTarget or ConnectionType.Never): it can be compiled and exported, not run', {
        type: 'device',
      });
    }
    device.checkReady();
    if (device.isAttached) return;
    if (connectionType === 'OnDemand') {
      device.attach();
      return;
    }
    throw new PoptfjsError('the executor is detached from its device: call attachToDevice() before running it', { type: 'device' });
  }

  /** The observer that raises faults planted on the programs a unit runs. */
  observer(): RunObserver {
    return {
      beforeWork: (unit, replica) => {
        for (const [ipu, programs] of this.units[unit]![replica]!) this.device.reach(programs, ipu);
      },
    };
  }
}

/** Chooses and acquires the device for a compiled executable, as the options say (an executor's device). */
export function acquireModelDevice(executable: Executable, settings: OptionsSettings, manager = new DeviceManager()): Device {
  const ipus = executable.placement.ipusReserved;
  const spec = { ...settings.ipuTarget, numIpus: ipus };
  if (settings.offlineIpuVersion !== undefined || settings.connectionType === 'Never') return manager.createOfflineIpuDevice(spec);
  if (settings.useIpuModel) return manager.createIpuModelDevice(spec);
  if (settings.ipuId !== undefined) {
    const device = manager.acquireDeviceById(settings.ipuId, { connectionType: 'OnDemand', spec: settings.ipuTarget });
    if (device.numIpus < ipus) {
      throw new PoptfjsError(`useIpuId(${settings.ipuId}): device ${settings.ipuId} has ${device.numIpus} IPU(s), but the model needs ${ipus}`, {
        type: 'device',
      });
    }
    return device;
  }
  // An executor attached at once takes its IPUs as it chooses them (one another process takes meanwhile is passed over).
  return manager.acquireAvailableDevice(ipus, { connectionType: settings.connectionType, spec: settings.ipuTarget });
}
