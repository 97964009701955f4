/**
 * The weights on an executor's device against the host model's: which host
 * version the device last loaded, loading the newest weights before a run
 * (another executor of the same model may have trained them), copying the
 * device's to the host, and marking the host's stale after a training step.
 */
import type * as tf from '@tensorflow/tfjs';
import type { Compiled } from './executable_install.js';
import { markHostWeightsCurrent, markHostWeightsStale } from './host_weight_access.js';
import { wrappedModelState, type WeightHolder } from './model_registry.js';

/** Makes the host `model` hold the newest weights (an executor's device may hold newer ones). */
export function syncHostWeights(model: object): void {
  const newest = wrappedModelState(model).newestOnDevice;
  if (newest && !newest.isDestroyed) newest.copyWeightsToHost();
}

/** The weights on the device of `holder`, an executor of `model`. */
export class DeviceWeights {
  /** The host version of the model's weights the device holds. */
  private loadedHostVersion = -1;

  constructor(
    private readonly model: object,
    private readonly holder: WeightHolder,
  ) {}

  /** Records that the device holds the host model's current weights (an executable was just loaded with them). */
  loadedCurrent(): void {
    this.loadedHostVersion = wrappedModelState(this.model).hostVersion;
  }

  /** Brings the device weights up to date with the newest copy of the model's weights. */
  sync(compiled: Compiled): void {
    const state = wrappedModelState(this.model);
    const newest = state.newestOnDevice;
    if (newest && newest !== this.holder && !newest.isDestroyed) newest.copyWeightsToHost();
    if (this.loadedHostVersion < state.hostVersion) this.load(compiled);
  }

  /** Loads the host model's weights on the device. */
  load(compiled: Compiled): void {
    const state = wrappedModelState(this.model);
    compiled.engine.writeHostWeights(compiled.variables);
    this.loadedHostVersion = state.hostVersion;
    if (state.newestOnDevice === this.holder) state.newestOnDevice = undefined;
  }

  /**
   * Loads the host model's weights on the device as they are, as a new host
   * version: every other executor of the model loads them before its next
   * run. The device's own trained weights are not copied back first, as
   * PopTorch's `copyWeightsToDevice` overwrites them with the host's.
   */
  loadNewHostVersion(compiled: Compiled): void {
    markHostWeightsCurrent(this.holder);
    wrappedModelState(this.model).hostVersion++;
    this.load(compiled);
  }

  /** Writes the device weights (and buffers) into the host model's variables, a new host version. */
  copyToHost(compiled: Compiled): void {
    markHostWeightsCurrent(this.holder);
    compiled.engine.readHostWeights(compiled.variables);
    const state = wrappedModelState(this.model);
    state.hostVersion++;
    this.loadedHostVersion = state.hostVersion;
    if (state.newestOnDevice === this.holder) state.newestOnDevice = undefined;
  }

  /** Records that a training step made the device's weights of `variables` newer than the host's. */
  trained(variables: ReadonlyMap<string, tf.Variable>): void {
    wrappedModelState(this.model).newestOnDevice = this.holder;
    markHostWeightsStale(this.holder, variables);
  }

  /** Records that no other executor's device holds newer weights (the device was restored from a checkpoint). */
  forgetOtherNewest(): void {
    const state = wrappedModelState(this.model);
    if (state.newestOnDevice !== this.holder) state.newestOnDevice = undefined;
  }
}
