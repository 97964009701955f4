/**
 * Tracing with some variables standing for another value.
 *
 * A weight split across replica groups has a host shape of
 * `[groups, ...sliceShape]`, but each replica computes with one slice. The
 * model reads the `tf.Variable` object itself, so while tracing, the variable
 * is made to point at a slice (its data, shape, size and strides), and is
 * restored afterwards, whatever happens.
 */
import type * as tf from '@tensorflow/tfjs';

/** The fields of a tensor that say what data it holds. */
interface TensorView {
  dataId: object;
  shape: number[];
  size: number;
  strides: number[];
  rankType: string;
}

function viewOf(t: tf.Tensor): TensorView {
  const v = t as unknown as TensorView;
  return { dataId: v.dataId, shape: v.shape, size: v.size, strides: v.strides, rankType: v.rankType };
}

/** Runs `fn` with each variable in `replacements` reading as its replacement tensor. */
export function withVariablesReplaced<T>(replacements: ReadonlyMap<tf.Variable, tf.Tensor>, fn: () => T): T {
  const saved = new Map<tf.Variable, TensorView>();
  try {
    for (const [variable, value] of replacements) {
      saved.set(variable, viewOf(variable));
      Object.assign(variable, viewOf(value));
    }
    return fn();
  } finally {
    for (const [variable, view] of saved) Object.assign(variable, view);
  }
}
