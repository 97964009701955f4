/**
 * The names reports give a model's weights: each weight's name in its model,
 * not the one tfjs gave its tf.Variable in this process. tfjs makes every
 * variable name unique in the process, so a model built or loaded a second
 * time gets `conv2d_1/kernel_1` where the first copy got `conv2d_1/kernel`;
 * a layer's weight keeps the name it had before that (`originalName`), and
 * that is the name reported. Weights of one model that share an original name
 * (two nested models with a layer of the same name) are told apart by a
 * number counted within the model, in the order of its layers, so every copy
 * of a model reports the same names. Variables made outside layers keep
 * their own names.
 *
 * Parameters are still bound to their tf.Variables by the variables' own
 * names (executables, checkpoints and optimizers use those); only what is
 * shown changes.
 */
import type * as tf from '@tensorflow/tfjs';

/** A layer's weight as tfjs-layers keeps it (`LayerVariable`, whose `val` its types hide). */
interface LayerWeight {
  readonly originalName: string;
  readonly val: tf.Variable;
}

/** `name`, or `name_1`, `name_2`, ... whichever is first not in `taken`. */
function untaken(name: string, taken: ReadonlySet<string>): string {
  if (!taken.has(name)) return name;
  let k = 1;
  while (taken.has(`${name}_${k}`)) k++;
  return `${name}_${k}`;
}

/**
 * The reported name of each of `variables` and of every weight of `layers`
 * (a model's layers, in its order), by tf.Variable name.
 */
export function reportedWeightNames(layers: Iterable<tf.layers.Layer>, variables: Iterable<tf.Variable>): Map<string, string> {
  const originalNames = new Map<tf.Variable, string>();
  for (const layer of layers) {
    for (const weight of layer.weights as unknown as LayerWeight[]) {
      if (!originalNames.has(weight.val)) originalNames.set(weight.val, weight.originalName);
    }
  }
  const names = new Map<string, string>();
  for (const v of variables) if (!originalNames.has(v)) names.set(v.name, v.name);
  const taken = new Set(names.values());
  for (const [v, originalName] of originalNames) {
    const name = untaken(originalName, taken);
    taken.add(name);
    names.set(v.name, name);
  }
  return names;
}
