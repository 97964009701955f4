/**
 * An executor's weight sync: copying the device's weights to the host model
 * (always, or only when a training step made them newer), and the host's to
 * the device (all weights, or only the buffers named as updatable). After a
 * fault the device's weights are gone: an explicit copy is an error naming
 * the recovery, an implicit one leaves the host's weights with a warning.
 */
import { PoptfjsError } from '../common/errors.js';
import { getLogger } from '../common/log.js';
import { modelName } from '../trace/model_function.js';
import { hostWeightsStale, markHostWeightsCurrent } from './host_weight_access.js';
import type { ExecutorState } from './executor_state.js';

const log = getLogger('poptfjs');

/** Writes the device weights (and buffers) into the host model's variables. */
export function copyWeightsToHost(state: ExecutorState): void {
  const compiled = state.requireCompiled('copyWeightsToHost');
  const recovery = state.binding?.device.pendingRecovery;
  if (recovery !== undefined) {
    throw new PoptfjsError(`copyWeightsToHost: the device lost its weights in a fault; recover (${recovery}) with detachFromDevice() and attachToDevice()`, {
      type: 'device',
    });
  }
  state.weights.copyToHost(compiled);
}

/** Copies the device weights to the host model if a training step ran since they were last copied; true if it copied. */
export function copyWeightsToHostIfNeeded(state: ExecutorState): boolean {
  if (!hostWeightsStale(state.holder)) return false;
  const recovery = state.binding?.device.pendingRecovery;
  if (recovery !== undefined) {
    markHostWeightsCurrent(state.holder);
    log.warn(
      `the device of '${state.compiled?.executable.modelName ?? modelName(state.model)}' lost its weights in a fault (recover with ${recovery}); the host model keeps the weights last copied from it`,
    );
    return false;
  }
  copyWeightsToHost(state);
  return true;
}

/** Copies the host model's weights to the device as a new host version, which every other executor of the model loads before its next run. */
export function copyWeightsToDevice(state: ExecutorState): void {
  const compiled = state.requireCompiled('copyWeightsToDevice');
  state.weights.loadNewHostVersion(compiled);
}

/** Copies the host values of the buffers named with `Options.updatableNamedBuffers` to the device; an error if no buffer was named. */
export function copyNamedBuffersToDevice(state: ExecutorState): void {
  const compiled = state.requireCompiled('copyNamedBuffersToDevice');
  const names = state.options.settings.updatableNamedBuffers;
  if (names.length === 0) {
    throw new PoptfjsError('copyNamedBuffersToDevice: no buffers are marked as updatable; name them with Options.updatableNamedBuffers([...])', { type: 'executor' });
  }
  compiled.engine.writeHostWeights(compiled.variables, names);
}
