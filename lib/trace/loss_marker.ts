/**
 * The losses a training model marks with `ops.identityLoss` in one forward
 * pass, and which of them are final. As in PopTorch, a marked loss that
 * another marked loss is computed from is an intermediate loss: it stays a
 * plain reduction of its input (sum, mean or none) and its value can be
 * returned as an output; the loss trained on is the one final loss, which no
 * other marked loss uses.
 *
 * While losses are collected, the engine's `runKernel` is wrapped to follow
 * which marked losses each new tensor is computed from.
 */
import type * as tf from '@tensorflow/tfjs';
import { engine, type KernelInputs } from '../backend/tfjs_internals.js';

/** The marked losses of a forward pass in progress. */
interface LossCollection {
  /** Every marked loss, in the order they were made. */
  readonly marked: tf.Tensor[];
  /** The marked losses each tensor is computed from (including itself), by tensor id. */
  readonly sources: Map<number, ReadonlySet<tf.Tensor>>;
  /** The marked losses another marked loss is computed from. */
  readonly intermediate: Set<tf.Tensor>;
}

let active: LossCollection | undefined;

/** What {@link collectLosses} found. */
export interface CollectedLosses<T> {
  readonly result: T;
  /** The marked losses no other marked loss is computed from, in the order they were made. */
  readonly finalLosses: tf.Tensor[];
}

function sourcesOf(collection: LossCollection, inputs: KernelInputs): Set<tf.Tensor> | undefined {
  let found: Set<tf.Tensor> | undefined;
  for (const x of Array.isArray(inputs) ? inputs : Object.values(inputs)) {
    const sources = x ? collection.sources.get(x.id) : undefined;
    if (sources) for (const s of sources) (found ??= new Set()).add(s);
  }
  return found;
}

/** The marked losses of `collection` no other marked loss is computed from. */
function finalLosses(collection: LossCollection): tf.Tensor[] {
  return collection.marked.filter((l) => !collection.intermediate.has(l));
}

/** Runs `fn` (a forward pass) and returns its result with the final losses it marked. */
export function collectLosses<T>(fn: () => T): CollectedLosses<T> {
  const collection: LossCollection = { marked: [], sources: new Map(), intermediate: new Set() };
  const eng = engine();
  const ownRunKernel = Object.hasOwn(eng, 'runKernel');
  const runKernel = eng.runKernel;
  eng.runKernel = function (kernelName, inputs, attrs) {
    const out = runKernel.call(eng, kernelName, inputs, attrs);
    const sources = sourcesOf(collection, inputs);
    if (sources) for (const t of Array.isArray(out) ? out : [out]) collection.sources.set(t.id, sources);
    return out;
  };
  const enclosing = active;
  active = collection;
  try {
    const result = fn();
    return { result, finalLosses: finalLosses(collection) };
  } finally {
    active = enclosing;
    if (ownRunKernel) eng.runKernel = runKernel;
    else delete (eng as { runKernel?: unknown }).runKernel;
  }
}

/** @internal Marks `loss`, made by `ops.identityLoss` from `input`, as a loss of the forward pass being collected. */
export function markLoss(loss: tf.Tensor, input: tf.Tensor): void {
  if (!active) return;
  const sources = active.sources.get(input.id) ?? new Set<tf.Tensor>();
  for (const s of sources) active.intermediate.add(s);
  active.marked.push(loss);
  active.sources.set(loss.id, new Set([...sources, loss]));
}

/**
 * The final losses of the forward pass being collected, as marked so far
 * (all of them once the model has returned); undefined when no forward pass
 * is collecting losses.
 */
export function finalLossesSoFar(): tf.Tensor[] | undefined {
  return active && finalLosses(active);
}
