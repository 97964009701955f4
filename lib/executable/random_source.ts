/**
 * A seeded, serializable random number generator for the random
 * pseudo-kernels (dropout masks, noise), so runs are reproducible under
 * `Options.randomSeed` and the generator's state can be checkpointed.
 * The generator is xoshiro128** (32-bit state words).
 */

/** The generator's state: four 32-bit words. */
export type RandomState = [number, number, number, number];

function splitmix32(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
}

/** A xoshiro128** generator. */
export class RandomSource {
  private s: Uint32Array;

  /** A generator seeded with `seed` (an integer), or from `Math.random` when omitted. */
  constructor(seed?: number) {
    const next = splitmix32(seed ?? Math.floor(Math.random() * 2 ** 32));
    this.s = new Uint32Array([next(), next(), next(), next()]);
    if (this.s.every((w) => w === 0)) this.s[0] = 1;
  }

  /** The state, to save and {@link RandomSource.setState} later. */
  getState(): RandomState {
    return [this.s[0]!, this.s[1]!, this.s[2]!, this.s[3]!];
  }

  /** Restores a state returned by {@link RandomSource.getState}. */
  setState(state: RandomState): void {
    if (state.length !== 4 || state.every((w) => w === 0)) throw new RangeError('invalid random generator state');
    this.s = new Uint32Array(state);
  }

  /** The next 32-bit unsigned integer. */
  nextUint32(): number {
    const s = this.s;
    const result = Math.imul(rotl(Math.imul(s[1]!, 5) >>> 0, 7), 9) >>> 0;
    const t = (s[1]! << 9) >>> 0;
    s[2]! ^= s[0]!;
    s[3]! ^= s[1]!;
    s[1]! ^= s[2]!;
    s[0]! ^= s[3]!;
    s[2]! ^= t;
    s[3] = rotl(s[3]!, 11);
    return result;
  }

  /** A float in [0, 1) with 24 random bits (exact in float32). */
  nextFloat(): number {
    return (this.nextUint32() >>> 8) / 16777216;
  }

  /** `n` floats uniform in [minval, maxval). */
  uniform(n: number, minval: number, maxval: number): Float32Array {
    const out = new Float32Array(n);
    const range = maxval - minval;
    for (let i = 0; i < n; i++) out[i] = minval + range * this.nextFloat();
    return out;
  }

  /** `n` normal samples; with `truncated`, samples beyond two standard deviations are redrawn. */
  normal(n: number, mean: number, stddev: number, truncated = false): Float32Array {
    const out = new Float32Array(n);
    let i = 0;
    while (i < n) {
      // Marsaglia's polar method: two independent standard normals per accepted pair.
      let u: number, v: number, s: number;
      do {
        u = 2 * this.nextFloat() - 1;
        v = 2 * this.nextFloat() - 1;
        s = u * u + v * v;
      } while (s >= 1 || s === 0);
      const m = Math.sqrt((-2 * Math.log(s)) / s);
      for (const z of [u * m, v * m]) {
        if (i >= n) break;
        if (truncated && Math.abs(z) > 2) continue;
        out[i++] = mean + stddev * z;
      }
    }
    return out;
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}
