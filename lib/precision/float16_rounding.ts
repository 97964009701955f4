/**
 * Rounding tensors to float16: the cast every float16 result of the
 * simulated device goes through (op outputs, weight updates, optimizer state
 * and gradient accumulators held in float16).
 */
import * as tf from '@tensorflow/tfjs';
import { roundFloat16Array, type RoundingRandomness } from './float16.js';

/** Rounds float32 tensors to float16 values, to nearest even or stochastically. */
export class Float16Rounding {
  /**
   * @param stochastic round up or down at random (unbiased) instead of to nearest even
   * @param random the random bits stochastic rounding draws (the device's seeded generator)
   */
  constructor(
    readonly stochastic: boolean,
    private readonly random: RoundingRandomness,
  ) {}

  /** A new float32 tensor holding the values of `t` rounded to float16; `t` is left alone. */
  round(t: tf.Tensor): tf.Tensor {
    const values = t.dataSync() as Float32Array;
    const rounded = roundFloat16Array(values, new Float32Array(values.length), this.stochastic ? this.random : undefined);
    return tf.tensor(rounded, t.shape, 'float32');
  }

  /** Rounds `t` to float16 and disposes it: `t = rounding.replace(t)`. */
  replace(t: tf.Tensor): tf.Tensor {
    const rounded = this.round(t);
    t.dispose();
    return rounded;
  }
}
