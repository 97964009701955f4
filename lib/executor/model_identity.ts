/**
 * The identity of a tfjs model across exports: every export of one model
 * (its training and its inference executable, say) records the same random
 * id, and the models `load()` rebuilds from files with the same id share
 * their weights, as the wrappers of the original model shared its weights.
 */
import { randomUUID } from 'node:crypto';

const ids = new WeakMap<object, string>();

/** The id of `model`, made on first use. */
export function modelIdentity(model: object): string {
  let id = ids.get(model);
  if (id === undefined) {
    id = randomUUID();
    ids.set(model, id);
  }
  return id;
}

/** Gives a model rebuilt from an export the id of the model it was exported from. */
export function adoptModelIdentity(model: object, id: string): void {
  ids.set(model, id);
}
