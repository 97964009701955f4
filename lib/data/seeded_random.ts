/**
 * A small seeded pseudo-random generator (mulberry32) for reproducible
 * shuffling: the same seed gives the same sequence on every platform.
 */

/** A reproducible stream of pseudo-random numbers. */
export class SeededRandom {
  #state: number;

  /** A stream determined by `seed` (any safe integer; only its value matters). */
  constructor(seed: number) {
    this.#state = (seed >>> 0) ^ (Math.floor(seed / 2 ** 32) >>> 0);
  }

  /** The next number, uniform in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let mixed = this.#state;
    mixed = Math.imul(mixed ^ (mixed >>> 15), mixed | 1);
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61);
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 2 ** 32;
  }

  /** A uniformly random permutation of `0 .. length - 1` (Fisher-Yates). */
  permutation(length: number): Int32Array {
    const order = new Int32Array(length);
    for (let index = 0; index < length; index += 1) order[index] = index;
    for (let index = length - 1; index > 0; index -= 1) {
      const other = Math.floor(this.next() * (index + 1));
      const held = order[index] as number;
      order[index] = order[other] as number;
      order[other] = held;
    }
    return order;
  }
}
