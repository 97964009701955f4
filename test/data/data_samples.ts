/**
 * Data for the DataLoader tests: numbered samples and options that do not
 * read the environment.
 */
import * as tf from '@tensorflow/tfjs';
import { Options } from '../../lib/options/index.js';

/** Options that do not read the environment. */
export function options(): Options {
  return new Options({ fromEnvironment: false });
}

/** `n` samples: x[i] = [i, i + 0.5], y[i] = i. */
export function samples(n: number): [tf.Tensor2D, tf.Tensor1D] {
  const y = tf.range(0, n, 1, 'float32') as tf.Tensor1D;
  const x = tf.tidy(() => tf.stack([y, y.add(0.5)], 1) as tf.Tensor2D);
  return [x, y];
}
