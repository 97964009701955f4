/**
 * The float32 scalars an optimizer update multiplies and divides by (the
 * learning rate, the momentum, `1 - dampening`, ...), made once and reused
 * from step to step while the numbers stay the same.
 *
 * `tf.mul(x, 0.01)` makes a new float32 scalar tensor of 0.01 on every call,
 * which on the wasm backend costs about as much as the product of a small
 * parameter; `tf.mul(x, scalars.of(0.01))` gives the same numbers bit for bit
 * (the same float32 scalar) without it. A scalar not asked for during a step
 * is disposed at its end ({@link ScalarConstants.endStep}), so a learning
 * rate that changes every step keeps one scalar alive, not one per step.
 */
import * as tf from '@tensorflow/tfjs';

/** The map key of a number: -0 apart from 0 (they multiply to different signs). */
const keyOf = (value: number): number | '-0' => (Object.is(value, -0) ? '-0' : value);

/** Float32 scalar tensors by value, kept between steps (see the module's description). */
export class ScalarConstants {
  private readonly held = new Map<number | '-0', tf.Scalar>();
  private readonly used = new Set<number | '-0'>();

  /** The float32 scalar of `value`, made on the first call since it was last disposed; the caller must not dispose it. */
  of(value: number): tf.Scalar {
    const key = keyOf(value);
    let scalar = this.held.get(key);
    if (scalar === undefined || scalar.isDisposed) {
      scalar = tf.keep(tf.scalar(value, 'float32'));
      this.held.set(key, scalar);
    }
    this.used.add(key);
    return scalar;
  }

  /** Ends a step: disposes the scalars not asked for since the previous call. */
  endStep(): void {
    for (const [key, scalar] of this.held) {
      if (this.used.has(key)) continue;
      scalar.dispose();
      this.held.delete(key);
    }
    this.used.clear();
  }

  /** Disposes every scalar held. */
  dispose(): void {
    for (const scalar of this.held.values()) scalar.dispose();
    this.held.clear();
    this.used.clear();
  }
}
