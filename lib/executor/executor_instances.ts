/**
 * An executor's part in a multi-instance run: instance 0 alone writes the
 * run's files, a training run starts every instance from instance 0's device
 * state, a fault on one instance fails the step on all, and the summary
 * report counts the gradient all-reduce across the instances.
 */
import { RecoverableError } from '../common/errors.js';
import { getLogger } from '../common/log.js';
import { broadcastDeviceState } from '../distributed/device_state_broadcast.js';
import type { InstanceRun } from '../distributed/instance_run.js';
import type { Device } from '../ipu/device.js';
import { hostNetworkBandwidth, instanceAllReduce, type InstanceAllReduce } from '../ipu/host_network.js';
import type { Executable } from '../executable/executable.js';
import type { Engine } from '../engine/engine.js';

const log = getLogger('poptfjs');

/** This process's place in a multi-instance run (none when it runs alone), and whether the instances have started from instance 0's state. */
export class ExecutorInstances {
  private synced = false;

  /** `run`: this process's place among the instances, undefined when it runs alone. */
  constructor(private readonly run: InstanceRun | undefined) {}

  /** True (with a debug line) on an instance other than 0 of a multi-instance run: instance 0 writes the run's files. */
  skipsWriting(what: string): boolean {
    if (!this.run || this.run.index === 0) return false;
    log.debug(`${what}: instance ${this.run.index} of ${this.run.count} does not write; instance 0 does`);
    return true;
  }

  /** Before a training step: the first step (and the first after a fault) starts every instance from instance 0's device state. */
  async beforeStep(engine: Engine, training: boolean): Promise<void> {
    if (training && this.run && !this.synced) {
      await broadcastDeviceState(engine, this.run.world);
      this.synced = true;
    }
  }

  /** After a step failed with `error` on `device`. */
  stepFailed(error: unknown, device: Device): void {
    // A fault on any instance of a run fails the step on all (iteration_failure.ts): every device lost its state, and the next step starts again from instance 0's.
    if (this.run && error instanceof RecoverableError) {
      device.shareFault(error.recoveryAction);
      this.synced = false;
    }
  }

  /** The gradient all-reduce across the instances of a training run, for the summary report of `executable`. */
  gradientAllReduce(executable: Executable, training: boolean): InstanceAllReduce | undefined {
    return training && this.run ? instanceAllReduce(executable.graph, this.run.count, executable.factors.deviceIterations, hostNetworkBandwidth()) : undefined;
  }
}
