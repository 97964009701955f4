/**
 * IEEE 754 binary16 ("half", float16) arithmetic on float32 numbers: tfjs has
 * no float16 dtype, so float16 values are float32 numbers that are exactly
 * representable in float16. Rounding to float16 is round-to-nearest-even by
 * default, or stochastic (round up with probability equal to the distance
 * from the lower neighbour, so the expected value is exact). Subnormals are
 * kept (down to 2^-24), values beyond the largest finite float16 (65504)
 * overflow to ±Infinity, NaN stays NaN and zeros keep their sign.
 */

/** The largest finite float16 value. */
export const FLOAT16_MAX = 65504;
/** The smallest positive normal float16 value (2^-14). */
export const FLOAT16_MIN_NORMAL = 2 ** -14;
/** The smallest positive subnormal float16 value (2^-24). */
export const FLOAT16_MIN_SUBNORMAL = 2 ** -24;
/** The distance between 1 and the next float16 value (2^-10). */
export const FLOAT16_EPSILON = 2 ** -10;

/** A source of uniform random bits for stochastic rounding. */
export interface RoundingRandomness {
  /** The next 32-bit unsigned integer. */
  nextUint32(): number;
}

/** Float32 bits of the smallest normal float16 (exponent field 113 = 127 - 14). */
const MIN_NORMAL_EXPONENT = 113;
/** Float32 exponent field above which a rounded value is beyond the float16 range (2^16 and up). */
const OVERFLOW_EXPONENT = 143;
/** The 13 float32 mantissa bits below float16's 10. */
const DROPPED_BITS = 0x1fff;
const HALF_DROPPED = 0x1000;

const scratch = new Float32Array(1);

/**
 * Rounds the float32 numbers of `values` to float16 into `out` (which may be
 * `values` itself). With `random`, rounds stochastically; otherwise to
 * nearest, ties to even.
 */
export function roundFloat16Array(values: Float32Array, out: Float32Array = new Float32Array(values.length), random?: RoundingRandomness): Float32Array {
  if (out.length !== values.length) throw new RangeError(`roundFloat16Array: out has ${out.length} elements, values ${values.length}`);
  const inBits = new Uint32Array(values.buffer, values.byteOffset, values.length);
  const outBits = new Uint32Array(out.buffer, out.byteOffset, out.length);
  for (let i = 0; i < values.length; i++) {
    const bits = inBits[i]!;
    const exponent = (bits >>> 23) & 0xff;
    if (exponent === 0xff) {
      outBits[i] = bits;
    } else if (exponent >= MIN_NORMAL_EXPONENT) {
      // Normal float16 range: drop 13 mantissa bits; a carry moves into the exponent.
      const increment = random ? random.nextUint32() & DROPPED_BITS : HALF_DROPPED - 1 + ((bits >>> 13) & 1);
      const rounded = ((bits + increment) & ~DROPPED_BITS) >>> 0;
      outBits[i] = ((rounded >>> 23) & 0xff) >= OVERFLOW_EXPONENT ? (bits & 0x80000000) | 0x7f800000 : rounded;
    } else {
      // Subnormal float16 range: a multiple of 2^-24 (exact in double arithmetic).
      const scaled = values[i]! / FLOAT16_MIN_SUBNORMAL;
      const magnitude = Math.abs(scaled);
      let n = Math.floor(magnitude);
      const fraction = magnitude - n;
      if (random) {
        if (fraction * 4294967296 > random.nextUint32()) n++;
      } else if (fraction > 0.5 || (fraction === 0.5 && n % 2 === 1)) {
        n++;
      }
      out[i] = (scaled < 0 || Object.is(scaled, -0) ? -n : n) * FLOAT16_MIN_SUBNORMAL;
    }
  }
  return out;
}

/** The float16 value nearest to `x` (ties to even), as a number. */
export function roundToFloat16(x: number): number {
  scratch[0] = x;
  return roundFloat16Array(scratch, scratch)[0]!;
}

/** True if the float32 value of `x` is a float16 value (NaN and ±Infinity included). */
export function isFloat16Value(x: number): boolean {
  scratch[0] = x;
  const f = scratch[0]!;
  return Number.isNaN(f) || Object.is(roundToFloat16(f), f);
}
