/**
 * A simulated device: one or more IPUs (or the IPU Model, the CPU, or an
 * offline target that only compiles), attached and detached like hardware,
 * with Poplar's simulated-error API for testing recovery code.
 */
import { PoptfjsError, UnrecoverableError, type RecoveryAction } from '../common/errors.js';
import type { ConnectionType } from '../option_vocabulary/enums.js';
import { lockIpus, tryLockIpus, unlockIpus } from './ipu_locks.js';
import { sameLocation, simulatedFault, type ErrorLocation, type SimulatedErrorCode } from './simulated_errors.js';
import type { IpuTargetSpec } from '../ipu/target_spec.js';

/** What kind of device. */
export type DeviceKind = 'Ipu' | 'IpuModel' | 'Cpu' | 'OfflineIpu';

/** A program loaded on the device: a schedule unit or kernel, and the IPUs it runs on. */
export interface LoadedProgram {
  readonly program: string;
  readonly ipus: readonly number[];
}

/** A simulated device. Obtain one from `DeviceManager`. */
export class Device {
  private attached = false;
  private programs: LoadedProgram[] = [];
  private readonly planted: Array<{ code: SimulatedErrorCode; location: ErrorLocation }> = [];
  private fault: { action: RecoveryAction } | { unrecoverable: string } | undefined;

  /** @internal Use `DeviceManager`. */
  constructor(
    /** The device id (PopART numbering for IPUs; -1 for the IPU Model, CPU and offline devices). */
    readonly id: number,
    readonly kind: DeviceKind,
    /** The system IPUs of an `Ipu` device (0-based), or `numIpus` virtual ones. */
    readonly ipus: readonly number[],
    /** The hardware each IPU models. */
    readonly spec: IpuTargetSpec,
    /** When the device is attached: at once (`Always`), when first needed (`OnDemand`), or never (`Never`, compile only). */
    readonly connectionType: ConnectionType,
  ) {}

  /** Number of IPUs. */
  get numIpus(): number {
    return this.ipus.length;
  }

  /** Tiles per IPU (Poplar's `Target::getTilesPerIPU()`). */
  get tilesPerIPU(): number {
    return this.spec.tiles;
  }

  /** The IPU architecture: `ipu2` for the GC200, `ipu21` for the Bow IPU (Poplar's target names). */
  get version(): 'ipu2' | 'ipu21' {
    return this.spec.ipu === 'Bow' ? 'ipu21' : 'ipu2';
  }

  /** The tile clock in Hz, at which cycle counts are counted (Poplar's `Target::getTileClockFrequency()`). */
  getTileClockFrequency(): number {
    return this.spec.clockHz;
  }

  /** True if programs can run on this device (not an offline target, not `ConnectionType.Never`). */
  get canRun(): boolean {
    return this.kind !== 'OfflineIpu' && this.connectionType !== 'Never';
  }

  /** True while attached. */
  get isAttached(): boolean {
    return this.attached;
  }

  /**
   * Attaches this process to the device: its IPUs are locked against other
   * processes (an error naming the holder, or a wait with
   * `POPTFJS_WAIT_FOR_IPU=1`). Attaching clears a recoverable fault: the
   * device comes back reset, with nothing loaded.
   */
  attach(): void {
    this.checkAttachable();
    if (this.attached) return;
    if (this.kind === 'Ipu') lockIpus(this.ipus);
    this.markAttached();
  }

  /** Attaches unless the IPUs are held by another process, without waiting for them; returns whether it attached. */
  tryAttach(): boolean {
    this.checkAttachable();
    if (this.attached) return true;
    if (this.kind === 'Ipu' && tryLockIpus(this.ipus) !== undefined) return false;
    this.markAttached();
    return true;
  }

  private checkAttachable(): void {
    if (!this.canRun) {
      throw new PoptfjsError(`device ${this.id} is an offline target (compile only) and cannot be attached`, { type: 'device' });
    }
    if (this.fault && 'unrecoverable' in this.fault) {
      throw new UnrecoverableError(`device ${this.id} had an unrecoverable fault (${this.fault.unrecoverable}) and cannot be attached`);
    }
  }

  private markAttached(): void {
    this.attached = true;
    this.fault = undefined;
  }

  /** Detaches, letting other processes use the IPUs. */
  detach(): void {
    if (!this.attached) return;
    if (this.kind === 'Ipu') unlockIpus(this.ipus);
    this.attached = false;
  }

  /** The recovery a fault asks for before the device can run again, if any. */
  get pendingRecovery(): RecoveryAction | undefined {
    return this.fault && 'action' in this.fault ? this.fault.action : undefined;
  }

  /**
   * @internal A fault elsewhere in the run (on another instance) took this
   * device's state too: it needs `action` before running again, as after a
   * fault of its own (an unrecoverable fault stays).
   */
  shareFault(action: RecoveryAction): void {
    if (!(this.fault && 'unrecoverable' in this.fault)) this.fault = { action };
  }

  /** @internal Records what an executable placed on the device, for fault locations. */
  loadPrograms(programs: readonly LoadedProgram[]): void {
    this.programs = [...programs];
  }

  private checkIpu(ipu: number): void {
    if (!Number.isInteger(ipu) || ipu < 0 || ipu >= this.numIpus) {
      throw new PoptfjsError(`device ${this.id} has ${this.numIpus} IPU(s); there is no IPU ${ipu}`, { type: 'device' });
    }
  }

  /**
   * The locations of `program` (a schedule unit such as `F0` or `B1`, or a
   * kernel name such as `MatMul`): one per IPU it runs on (its first tile),
   * or the one on `tile` (numbered across the device).
   */
  getSimulatedErrorLocations(program: string, tile?: number): ErrorLocation[] {
    const loaded = this.programs.filter((p) => p.program === program);
    if (loaded.length === 0) {
      const known = [...new Set(this.programs.map((p) => p.program))];
      throw new PoptfjsError(`no program '${program}' is loaded on device ${this.id}${known.length ? `; loaded: ${known.join(', ')}` : ' (compile and load a model first)'}`, {
        type: 'device',
      });
    }
    const ipus = [...new Set(loaded.flatMap((p) => p.ipus))].sort((a, b) => a - b);
    if (tile === undefined) return ipus.map((ipu) => ({ program, ipu, tile: ipu * this.spec.tiles }));
    const ipu = Math.floor(tile / this.spec.tiles);
    this.checkIpu(ipu);
    return ipus.includes(ipu) ? [{ program, ipu, tile }] : [];
  }

  /**
   * Plants a fault: the next run reaching `location` throws. Recoverable
   * codes raise a `RecoverableError` once (the recovery clears them);
   * unrecoverable ones stay.
   */
  insertSimulatedError(code: SimulatedErrorCode, location: ErrorLocation): void {
    this.checkIpu(location.ipu);
    if (this.planted.some((p) => sameLocation(p.location, location))) {
      throw new PoptfjsError(`an error is already simulated at ${location.program} on IPU ${location.ipu}, tile ${location.tile}`, { type: 'device' });
    }
    this.planted.push({ code, location });
  }

  /** Removes the fault planted at `location`. */
  eraseSimulatedError(location: ErrorLocation): void {
    const i = this.planted.findIndex((p) => sameLocation(p.location, location));
    if (i < 0) throw new PoptfjsError(`no error is simulated at ${location.program} on IPU ${location.ipu}, tile ${location.tile}`, { type: 'device' });
    this.planted.splice(i, 1);
  }

  /** Removes every planted fault. */
  clearSimulatedErrors(): void {
    this.planted.length = 0;
  }

  /** @internal Throws if the device cannot run now (detached, or waiting for a recovery). */
  checkReady(): void {
    if (this.fault && 'unrecoverable' in this.fault) {
      throw new UnrecoverableError(`device ${this.id} had an unrecoverable fault (${this.fault.unrecoverable})`);
    }
    if (this.fault) {
      throw new PoptfjsError(`device ${this.id} needs ${this.fault.action} after a fault: call detachFromDevice() and attachToDevice() before running again`, {
        type: 'device',
      });
    }
  }

  /** @internal Called as a run reaches `programs` on device IPU `ipu`: raises a planted fault there. */
  reach(programs: readonly string[], ipu: number): void {
    const i = this.planted.findIndex((p) => p.location.ipu === ipu && programs.includes(p.location.program));
    if (i < 0) return;
    const { code, location } = this.planted[i]!;
    const error = simulatedFault(code, location);
    if ('recoveryAction' in error) {
      this.planted.splice(i, 1);
      this.fault = { action: error.recoveryAction as RecoveryAction };
    } else {
      this.fault = { unrecoverable: code };
    }
    throw error;
  }
}
