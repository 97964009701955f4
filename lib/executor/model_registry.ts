/**
 * What poptfjs knows about each wrapped model: which executor trains it, and
 * which copy of its weights is the newest (the host model, or the device of an
 * executor), so executors of the same model stay in sync implicitly.
 */
import { PoptfjsError } from '../common/errors.js';

/** The part of an executor the registry needs. */
export interface WeightHolder {
  /** Writes this executor's device weights into the host model. */
  copyWeightsToHost(): void;
  /** Writes them only if a training step ran since they were last written; true if it wrote them. */
  copyWeightsToHostIfNeeded(): boolean;
  /** True once `destroy()` was called. */
  readonly isDestroyed: boolean;
}

/** The weight bookkeeping of one wrapped model. */
export interface WrappedModelState {
  /** The live executor that trains the model, if any. */
  trainer: WeightHolder | undefined;
  /** Incremented each time device weights are written to the host model. */
  hostVersion: number;
  /** The executor whose device weights are newer than the host model's, if any. */
  newestOnDevice: WeightHolder | undefined;
}

const states = new WeakMap<object, WrappedModelState>();

/** The bookkeeping of `model`, created on first use. */
export function wrappedModelState(model: object): WrappedModelState {
  let state = states.get(model);
  if (!state) {
    state = { trainer: undefined, hostVersion: 0, newestOnDevice: undefined };
    states.set(model, state);
  }
  return state;
}

/** Records `executor` as the trainer of `model`; an error if a live one exists. */
export function claimTraining(model: object, modelName: string, executor: WeightHolder): void {
  const state = wrappedModelState(model);
  if (state.trainer && !state.trainer.isDestroyed) {
    throw new PoptfjsError(
      `model '${modelName}' is already wrapped by a live trainingModel executor; call destroy() on that executor before wrapping the model for training again`,
      { type: 'executor' },
    );
  }
  state.trainer = executor;
}

/** Forgets `executor` (it was destroyed). */
export function releaseExecutor(model: object, executor: WeightHolder): void {
  const state = wrappedModelState(model);
  if (state.trainer === executor) state.trainer = undefined;
  if (state.newestOnDevice === executor) state.newestOnDevice = undefined;
}
