/**
 * `DeviceManager`: the simulated IPU system, as PopART's. The system has
 * `POPTFJS_NUM_IPUS` IPUs (default 16). Devices are numbered as PopART
 * numbers them: the single IPUs first (0..N-1), then the pairs, the groups of
 * 4, 8 and 16. As on IPU hardware, a device whose IPUs another device of this
 * process has attached is not available: models wrapped one after the other
 * take IPUs 0, 1, 2, ... . Acquiring an available device and attaching it is
 * one step: the device is locked as it is chosen, and one another process
 * takes meanwhile is passed over for the next.
 */
import { PoptfjsError } from '../common/errors.js';
import { ConnectionType } from '../option_vocabulary/enums.js';
import { Device } from './device.js';
import { getLogger } from '../common/log.js';
import { attachedHere, ipuHolder, waitForIpus } from './ipu_locks.js';
import { GC200, targetSpec, type IpuTargetSpec } from './target_spec.js';
import { didYouMean } from '../common/name_suggestion.js';

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
  /** PopART's name of `numIpus`. */
  readonly numIPUs?: number;
  /** PopART's name of `tiles`: tiles per IPU. */
  readonly tilesPerIPU?: number;
}

/** PopART's keys of `createIpuModelDevice` where they differ from poptfjs's. */
const POPART_DEVICE_KEYS: Readonly<Record<string, string>> = { numIPUs: 'numIpus', tilesPerIPU: 'tiles' };

/**
 * The IPU count and target figures of `options`, PopART's keys understood;
 * an error naming an unknown key (with the key it is closest to) or a key
 * given under both its names.
 */
function modelDevice(options: ModelDeviceOptions, where: string): { numIpus: number; spec: IpuTargetSpec } {
  const known = ['numIpus', ...Object.keys(GC200)];
  const given: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(options)) {
    const name = POPART_DEVICE_KEYS[key] ?? key;
    if (!known.includes(name)) {
      throw new PoptfjsError(
        `${where}: '${key}' is not an option of the device${didYouMean(key, [...known, ...Object.keys(POPART_DEVICE_KEYS)])}; the options are ${known.join(', ')} (PopART's numIPUs, tilesPerIPU)`,
        {
          type: 'device',
        },
      );
    }
    if (name in given) throw new PoptfjsError(`${where}: '${key}' and '${name}' are the same option; give one`, { type: 'device' });
    given[name] = value;
  }
  const { numIpus = 1, ...spec } = given as Partial<IpuTargetSpec> & { numIpus?: number };
  return { numIpus, spec: targetSpec(spec, where) };
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
    return this.layout().map((device) => ({
      ...device,
      heldBy: [...new Set(device.ipus.map((ipu) => ipuHolder(ipu)?.pid).filter((pid): pid is number => pid !== undefined))],
    }));
  }

  /** The devices of the system and their IPUs, in PopART's numbering. */
  private layout(): Array<Omit<DeviceInfo, 'heldBy'>> {
    const devices: Array<Omit<DeviceInfo, 'heldBy'>> = [];
    for (let size = 1; size <= this.numIpus; size *= 2) {
      for (let first = 0; first < this.numIpus; first += size) {
        devices.push({ id: devices.length, numIpus: size, ipus: Array.from({ length: size }, (_, i) => first + i) });
      }
    }
    return devices;
  }

  /** The device `info` (not attached yet). */
  private device(info: Omit<DeviceInfo, 'heldBy'>, options: AcquireOptions): Device {
    return new Device(info.id, 'Ipu', info.ipus, targetSpec(options.spec ?? {}), options.connectionType ?? ConnectionType.Always);
  }

  /**
   * A device of `numIpus` IPUs that no other process holds and none of whose
   * IPUs this process has attached (attached unless `OnDemand`; an
   * `OnDemand` device is locked when it attaches). When every such device is
   * attached in this process, the first is shared, as the simulator can
   * time-share IPUs (logged at info); when other processes hold them all, an
   * error, or with `POPTFJS_WAIT_FOR_IPU=1` a wait until one is free.
   */
  acquireAvailableDevice(numIpus = 1, options: AcquireOptions = {}): Device {
    const device = this.availableDevice(numIpus, options, waitForIpus());
    if (device) return device;
    const held = this.enumerateDevices()
      .filter((d) => d.numIpus === numIpus)
      .flatMap((d) => d.heldBy);
    throw new PoptfjsError(
      `no device of ${numIpus} IPU(s) is free: ${[...new Set(held)].map((pid) => `process ${pid}`).join(', ')} hold(s) IPUs; ` +
        'detach there, or set POPTFJS_WAIT_FOR_IPU=1 to wait',
      { type: 'device' },
    );
  }

  /** As {@link DeviceManager.acquireAvailableDevice}, or undefined when none is free (never waits). */
  tryAcquireAvailableDevice(numIpus = 1, options: AcquireOptions = {}): Device | undefined {
    return this.availableDevice(numIpus, options, false);
  }

  /**
   * The first device of `numIpus` IPUs, none of whose IPUs this process has
   * attached, that can be taken now, else the first that can be shared; an
   * `Always` device is taken by attaching it, so one another process took
   * since it was listed is passed over. With `wait`, waits while none can be
   * taken.
   */
  private availableDevice(numIpus: number, options: AcquireOptions, wait: boolean): Device | undefined {
    if (!isPowerOfTwo(numIpus) || numIpus > this.numIpus) {
      throw new PoptfjsError(`a device has a power of two IPUs, at most ${this.numIpus}; asked for ${numIpus}`, { type: 'device' });
    }
    for (;;) {
      const sized = this.layout().filter((d) => d.numIpus === numIpus);
      const fresh = sized.filter((d) => !d.ipus.some(attachedHere));
      const shared = sized.filter((d) => d.ipus.some(attachedHere));
      for (const info of [...fresh, ...shared]) {
        const device = this.device(info, options);
        const taken = device.connectionType === 'Always' ? device.tryAttach() : info.ipus.every((ipu) => ipuHolder(ipu) === undefined);
        if (!taken) continue;
        if (shared.includes(info)) log.info(`every device of ${numIpus} IPU(s) is attached in this process: sharing device ${info.id} (IPUs ${info.ipus.join(', ')})`);
        return device;
      }
      if (!wait) return undefined;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
    }
  }

  /** The device with id `id` (attached unless `OnDemand`); an error naming the holder if another process has it. */
  acquireDeviceById(id: number, options: AcquireOptions = {}): Device {
    const device = this.deviceById(id, options);
    if (device.connectionType === 'Always') device.attach();
    return device;
  }

  /** As {@link DeviceManager.acquireDeviceById}, or undefined when another process holds it (never waits). */
  tryAcquireDeviceById(id: number, options: AcquireOptions = {}): Device | undefined {
    const device = this.deviceById(id, options);
    if (device.connectionType !== 'Always') return device;
    return device.tryAttach() ? device : undefined;
  }

  /** The device with id `id`, not attached yet. */
  private deviceById(id: number, options: AcquireOptions): Device {
    const devices = this.layout();
    const info = devices[id];
    if (!info || !Number.isInteger(id)) {
      throw new PoptfjsError(`there is no device ${id}: the system's devices are 0 to ${devices.length - 1}`, { type: 'device' });
    }
    return this.device(info, options);
  }

  /** A CPU device: no memory limit, no timing, nothing to lock. */
  createCpuDevice(): Device {
    return new Device(-1, 'Cpu', [0], targetSpec({ tiles: 1, memoryPerTile: Number.MAX_SAFE_INTEGER }), ConnectionType.Always);
  }

  /** An IPU Model device (a software emulation: no lock) of `numIpus` IPUs with the given hardware figures. */
  createIpuModelDevice(options: ModelDeviceOptions = {}): Device {
    const { numIpus, spec } = modelDevice(options, 'createIpuModelDevice');
    return new Device(
      -1,
      'IpuModel',
      Array.from({ length: numIpus }, (_, i) => i),
      spec,
      ConnectionType.Always,
    );
  }

  /** An offline IPU target of `numIpus` IPUs: models can be compiled for it, not run. */
  createOfflineIpuDevice(options: ModelDeviceOptions = {}): Device {
    const { numIpus, spec } = modelDevice(options, 'createOfflineIpuDevice');
    return new Device(
      -1,
      'OfflineIpu',
      Array.from({ length: numIpus }, (_, i) => i),
      spec,
      ConnectionType.Never,
    );
  }
}
