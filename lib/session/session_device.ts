/**
 * A session's executable on its device: bound to the device (attaching it
 * unless it is `OnDemand`) and loaded with the host weights, which
 * `weightsFromHost` and `weightsToHost` copy between the host and the
 * device. A device fault during a run loses the device's weights until they
 * are copied from the host again; a device needing recovery or detached
 * cannot run.
 */
import type * as tf from '@tensorflow/tfjs';
import { PopartRuntimeError, PoplarSystemRuntimeError } from '../common/errors.js';
import { getLogger } from '../common/log.js';
import { Engine } from '../engine/engine.js';
import type { Device } from '../ipu/device.js';
import type { Executable } from '../executable/executable.js';
import type { Optimizer } from '../../optim/optimizer.js';

const devicexLog = getLogger('devicex');

/** What a session loads on its device. */
export interface SessionDeviceLoad {
  /** The session's name, for the log. */
  readonly name: string;
  readonly deviceInfo: Device;
  readonly executable: Executable;
  readonly optimizer: Optimizer | undefined;
  readonly seed: number | undefined;
  /** The host weights by IR parameter name. */
  readonly variables: ReadonlyMap<string, tf.Variable>;
  /** The session's engine options (`SessionOptions.engineOptions`). */
  readonly engineOptions: Readonly<Record<string, string>>;
}

/** A session's executable bound to its device and loaded. */
export class SessionDevice {
  /** True after a device fault, until the weights are loaded again. */
  #weightsLost = false;

  private constructor(
    private readonly deviceInfo: Device,
    /** The engine the executable runs on, loaded on the device. */
    readonly engine: Engine,
  ) {}

  /** Loads `load.executable` on an engine on the device, with the host weights. */
  static load(load: SessionDeviceLoad): SessionDevice {
    const { deviceInfo } = load;
    const engine = new Engine(load.executable, load.engineOptions, { optimizer: load.optimizer, seed: load.seed, hostWeights: load.variables });
    engine.load(deviceInfo);
    devicexLog.debug(`loaded '${load.name}' on device ${deviceInfo.id} (${deviceInfo.kind}, ${deviceInfo.numIpus} IPU(s)) with the host weights`);
    return new SessionDevice(deviceInfo, engine);
  }

  /** True after a device fault, until the weights are copied from the host again. */
  get weightsLost(): boolean {
    return this.#weightsLost;
  }

  /** An error if the device needs recovery after a fault, is not ready, or is detached while it should stay attached; `what` names the caller. */
  checkCanRun(what: string): void {
    const device = this.deviceInfo;
    const recovery = device.pendingRecovery;
    if (recovery !== undefined) {
      throw new PopartRuntimeError(
        `${what}: device ${device.id} needs ${recovery} after a fault: detach and attach it (deviceInfo.detach(); deviceInfo.attach()), then call weightsFromHost()`,
      );
    }
    device.checkReady();
    if (device.canRun && !device.isAttached && device.connectionType === 'Always') {
      throw new PopartRuntimeError(`${what}: device ${device.id} is detached; attach it (deviceInfo.attach()) first`);
    }
  }

  /** Makes the device ready for a run (attaching an `OnDemand` device). */
  readyToRun(): void {
    this.engine.deviceBinding.readyToRun(this.deviceInfo.connectionType);
  }

  /** Runs the step on a step's host inputs; a device fault loses the device's weights. */
  run(inputs: readonly tf.Tensor[], debugName?: string): ReturnType<Engine['runStep']> {
    try {
      return this.engine.runStep(inputs, debugName);
    } catch (error) {
      if (error instanceof PoplarSystemRuntimeError) this.#weightsLost = true;
      throw error;
    }
  }

  /** Runs the step program on the engine's connected streams; a device fault loses the device's weights. */
  runOnStreams(debugName?: string): void {
    try {
      this.engine.run(this.engine.programIndex('step'), debugName);
    } catch (error) {
      if (error instanceof PoplarSystemRuntimeError) this.#weightsLost = true;
      throw error;
    }
  }

  /** Copies the host weights to the device (after a fault, the optimizer state starts afresh too). */
  weightsFromHost(variables: ReadonlyMap<string, tf.Variable>): void {
    this.checkCanRun('weightsFromHost');
    devicexLog.debug('Writing weights from host to device');
    this.engine.writeHostWeights(variables);
    if (this.#weightsLost) this.engine.discardOptimizerState();
    this.#weightsLost = false;
  }

  /** Copies the device's weights to the host weights. */
  weightsToHost(variables: ReadonlyMap<string, tf.Variable>): void {
    if (this.#weightsLost) throw new PopartRuntimeError('weightsToHost: the device lost its weights in a fault; the host weights are the last ones copied');
    devicexLog.debug('Writing weights to host');
    this.engine.readHostWeights(variables);
  }
}
