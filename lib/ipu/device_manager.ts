/**
 * `DeviceManager`: the simulated IPU system, as PopART's. The system has
 * `POPTFJS_NUM_IPUS` IPUs (default 16). Devices are numbered as PopART
 * numbers them: the single IPUs first (0..N-1), then the pairs, the groups of
 * 4, 8 and 16. As on IPU hardware, a device whose IPUs another device of this
 * process has attached is not available: models wrapped one after the other
 * take IPUs 0, 1, 2, ... .
 */
import { PoptfjsError } from '../errors.js';
import { ConnectionType } from '../options/enums.js';
import { Device } from './device.js';
import { getLogger } from '../log.js';
import { attachedHere, ipuHolder, waitForIpus } from './ipu_locks.js';
import { targetSpec, type IpuTargetSpec } from './target_spec.js';

/** A device of the system, as `enumerateDevices` lists it. */
export interface DeviceInfo {
  readonly id: number;
  readonly numIpus: number;
  readonly ipus: readonly number[];
  /** Processes (other than this one) holding some of its IPUs. */
  readonly heldBy: readonly number[];
}

/** How to acquire a device. */
export interface AcquireOptions {
  /** When to attach (default `Always`: at once). */
  readonly connectionType?: ConnectionType;
  /** The hardware of each IPU (default: the Mk2 GC200). */
  readonly spec?: Partial<IpuTargetSpec>;
}

/** Options of the IPU Model and offline devices. */
export interface ModelDeviceOptions extends Partial<IpuTargetSpec> {
  /** Number of IPUs (default 1). */
  readonly numIpus?: number;
}

const log = getLogger('devicex');

function isPowerOfTwo(n: number): boolean {
  return Number.isInteger(n) && n > 0 && (n & (n - 1)) === 0;
}

/** The simulated IPU system. */
export class DeviceManager {
  /** IPUs in the system. */
  readonly numIpus: number;

  constructor(numIpus = Number(process.env.POPTFJS_NUM_IPUS || 16)) {
    if (!isPowerOfTwo(numIpus)) {
      throw new PoptfjsError(`the simulated system must have a power of two IPUs (POPTFJS_NUM_IPUS), got ${numIpus}`, { type: 'device' });
    }
    this.numIpus = numIpus;
  }

  /** Every device of the system: single IPUs, then groups of 2, 4, ... up to all IPUs. */
  enumerateDevices(): DeviceInfo[] {
    const devices: DeviceInfo[] = [];
    for (let size = 1; size <= this.numIpus; size *= 2) {
      for (let first = 0; first < this.numIpus; first += size) {
        const ipus = Array.from({ length: size }, (_, i) => first + i);
        const heldBy = [...new Set(ipus.map((ipu) => ipuHolder(ipu)?.pid).filter((pid): pid is number => pid !== undefined))];
        devices.push({ id: devices.length, numIpus: size, ipus, heldBy });
      }
    }
    return devices;
  }

  private device(info: DeviceInfo, options: AcquireOptions): Device {
    const connectionType = options.connectionType ?? ConnectionType.Always;
    const device = new Device(info.id, 'Ipu', info.ipus, targetSpec(options.spec ?? {}), connectionType);
    if (connectionType === 'Always') device.attach();
    return device;
  }

  /**
   * A device of `numIpus` IPUs that no other process holds and none of whose
   * IPUs this process has attached (attached unless `OnDemand`). When every
   * such device is attached in this process, the first is shared, as the
   * simulator can time-share IPUs (logged at info); an error if other
   * processes hold them all.
   */
  acquireAvailableDevice(numIpus = 1, options: AcquireOptions = {}): Device {
    const device = this.tryAcquireAvailableDevice(numIpus, options);
    if (device) return device;
    const held = this.enumerateDevices().filter((d) => d.numIpus === numIpus).flatMap((d) => d.heldBy);
    throw new PoptfjsError(
      `no device of ${numIpus} IPU(s) is free: ${[...new Set(held)].map((pid) => `process ${pid}`).join(', ')} hold(s) IPUs; ` +
        'detach there, or set POPTFJS_WAIT_FOR_IPU=1 to wait',
      { type: 'device' },
    );
  }

  /** As {@link DeviceManager.acquireAvailableDevice}, or undefined when none is free (never waits). */
  tryAcquireAvailableDevice(numIpus = 1, options: AcquireOptions = {}): Device | undefined {
    if (!isPowerOfTwo(numIpus) || numIpus > this.numIpus) {
      throw new PoptfjsError(`a device has a power of two IPUs, at most ${this.numIpus}; asked for ${numIpus}`, { type: 'device' });
    }
    for (;;) {
      const candidates = this.enumerateDevices().filter((d) => d.numIpus === numIpus && d.heldBy.length === 0);
      const free = candidates.find((d) => !d.ipus.some(attachedHere)) ?? sharedDevice(candidates[0]);
      if (free) {
        try {
          return this.device(free, options);
        } catch (error) {
          // Taken by another process between the look and the lock: try the next one.
          if (!(error instanceof PoptfjsError && error.type === 'device')) throw error;
          continue;
        }
      }
      if (!waitForIpus()) return undefined;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
    }
  }

  /** The device with id `id` (attached unless `OnDemand`); an error naming the holder if another process has it. */
  acquireDeviceById(id: number, options: AcquireOptions = {}): Device {
    const info = this.enumerateDevices()[id];
    if (!info || !Number.isInteger(id)) {
      throw new PoptfjsError(`there is no device ${id}: the system's devices are 0 to ${this.enumerateDevices().length - 1}`, { type: 'device' });
    }
    return this.device(info, options);
  }

  /** As {@link DeviceManager.acquireDeviceById}, or undefined when another process holds it. */
  tryAcquireDeviceById(id: number, options: AcquireOptions = {}): Device | undefined {
    const device = this.acquireDeviceById(id, { ...options, connectionType: 'OnDemand' });
    if ((options.connectionType ?? 'Always') !== 'Always') return device;
    return device.tryAttach() ? device : undefined;
  }

  /** A CPU device: no memory limit, no timing, nothing to lock. */
  createCpuDevice(): Device {
    return new Device(-1, 'Cpu', [0], targetSpec({ tiles: 1, memoryPerTile: Number.MAX_SAFE_INTEGER }), ConnectionType.Always);
  }

  /** An IPU Model device (a software emulation: no lock) of `numIpus` IPUs with the given hardware figures. */
  createIpuModelDevice(options: ModelDeviceOptions = {}): Device {
    const { numIpus = 1, ...spec } = options;
    return new Device(-1, 'IpuModel', Array.from({ length: numIpus }, (_, i) => i), targetSpec(spec, 'createIpuModelDevice'), ConnectionType.Always);
  }

  /** An offline IPU target of `numIpus` IPUs: models can be compiled for it, not run. */
  createOfflineIpuDevice(options: ModelDeviceOptions = {}): Device {
    const { numIpus = 1, ...spec } = options;
    return new Device(-1, 'OfflineIpu', Array.from({ length: numIpus }, (_, i) => i), targetSpec(spec, 'createOfflineIpuDevice'), ConnectionType.Never);
  }
}

/** `info`, logged as shared with other devices of this process (every device of its size is attached here). */
function sharedDevice(info: DeviceInfo | undefined): DeviceInfo | undefined {
  if (info) log.info(`every device of ${info.numIpus} IPU(s) is attached in this process: sharing device ${info.id} (IPUs ${info.ipus.join(', ')})`);
  return info;
}
