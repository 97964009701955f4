/**
 * Float16 rounding against float16 values decoded independently from their
 * bit patterns: every float16 value, every midpoint between neighbours and
 * the float32 numbers next to each midpoint; overflow, subnormals, zeros,
 * NaN; and stochastic rounding's statistics and determinism.
 */
import { describe, expect, it } from 'vitest';
import { FLOAT16_MAX, isFloat16Value, roundFloat16Array, roundToFloat16 } from 'poptfjs';
import { RandomSource } from '../../lib/executable/random_source.js';

/** The value of positive float16 bits 0..0x7bff, decoded from the IEEE layout. */
function decodeFloat16(bits: number): number {
  const exponent = bits >> 10;
  const fraction = bits & 0x3ff;
  return exponent === 0 ? fraction * 2 ** -24 : 2 ** (exponent - 15) * (1 + fraction / 1024);
}

/** Every positive finite float16 value, ascending. */
const VALUES = Array.from({ length: 0x7c00 }, (_, bits) => decodeFloat16(bits));

/** The float32 number next to `x` towards +Infinity (`up`) or -Infinity. */
function nextFloat32(x: number, up: boolean): number {
  const f = new Float32Array([x]);
  const u = new Uint32Array(f.buffer);
  u[0] = x > 0 ? u[0]! + (up ? 1 : -1) : u[0]! + (up ? -1 : 1);
  return f[0]!;
}

describe('round to nearest even', () => {
  it('keeps every float16 value, of either sign', () => {
    const values = new Float32Array([...VALUES, ...VALUES.map((v) => -v)]);
    expect(Array.from(roundFloat16Array(values))).toEqual(Array.from(values));
  });

  it('rounds each midpoint between neighbours to the even one, and the float32 numbers next to it to the nearer one', () => {
    const inputs: number[] = [];
    const expected: number[] = [];
    for (let bits = 0; bits < VALUES.length - 1; bits++) {
      const [low, high] = [VALUES[bits]!, VALUES[bits + 1]!];
      const mid = (low + high) / 2;
      inputs.push(mid, nextFloat32(mid, false), nextFloat32(mid, true));
      expected.push(bits % 2 === 0 ? low : high, low, high);
    }
    const all = new Float32Array([...inputs, ...inputs.map((v) => -v)]);
    expect(Array.from(all.subarray(0, inputs.length))).toEqual(inputs.map((v) => Math.fround(v)));
    expect(Array.from(roundFloat16Array(all))).toEqual([...expected, ...expected.map((v) => -v)]);
  });

  it('rounds random float32 numbers to a nearest neighbour', () => {
    const random = new RandomSource(11);
    const inputs = new Float32Array(100_000);
    for (let i = 0; i < inputs.length; i++) inputs[i] = (random.nextFloat() - 0.5) * 2 ** (random.nextFloat() * 44 - 28);
    const rounded = roundFloat16Array(inputs);
    const wrong = Array.from(inputs).filter((x, i) => {
      const r = rounded[i]!;
      const a = Math.abs(x);
      let k = 0;
      for (let step = 1 << 14; step > 0; step >>= 1) if (k + step < VALUES.length && VALUES[k + step]! <= a) k += step;
      const nearest = Math.min(Math.abs(a - VALUES[k]!), Math.abs(a - (VALUES[k + 1] ?? Infinity)));
      return !isFloat16Value(r) || (r !== 0 && Math.sign(r) !== Math.sign(x)) || Math.abs(Math.abs(r) - a) !== nearest;
    });
    expect(wrong).toEqual([]);
  });

  it('overflows beyond the largest float16 (65504) to Infinity, from the midpoint 65520 on', () => {
    expect(roundToFloat16(65504)).toBe(FLOAT16_MAX);
    expect(roundToFloat16(nextFloat32(65520, false))).toBe(65504);
    expect(roundToFloat16(65520)).toBe(Infinity);
    expect(roundToFloat16(-65520)).toBe(-Infinity);
    expect(roundToFloat16(1e30)).toBe(Infinity);
    expect(roundToFloat16(Infinity)).toBe(Infinity);
  });

  it('keeps subnormals down to 2^-24, flushes below half of it, and keeps the sign of zero and NaN', () => {
    expect(roundToFloat16(2 ** -24)).toBe(2 ** -24);
    expect(roundToFloat16(3 * 2 ** -25)).toBe(2 * 2 ** -24);
    expect(roundToFloat16(2 ** -25)).toBe(0);
    expect(roundToFloat16(nextFloat32(2 ** -25, true))).toBe(2 ** -24);
    expect(Object.is(roundToFloat16(-(2 ** -26)), -0)).toBe(true);
    expect(Object.is(roundToFloat16(-0), -0)).toBe(true);
    expect(roundToFloat16(1e-45)).toBe(0);
    expect(roundToFloat16(NaN)).toBeNaN();
  });
});

describe('stochastic rounding', () => {
  const N = 40_000;

  function roundMany(x: number, seed: number): Float32Array {
    return roundFloat16Array(new Float32Array(N).fill(x), undefined, new RandomSource(seed));
  }

  it.each([
    ['a normal number', 1 + 0.3 * 2 ** -10, 1, 1 + 2 ** -10],
    ['a negative normal number', -(1000 + 0.85 * 0.5), -1000, -1000.5],
    ['a subnormal number', 2.25 * 2 ** -24, 2 * 2 ** -24, 3 * 2 ** -24],
  ])('rounds %s to one of its neighbours with the probabilities that make it unbiased', (_, x, low, high) => {
    const rounded = roundMany(x, 5);
    const exact = Math.fround(x);
    const pHigh = (exact - low) / (high - low);
    expect(rounded.every((r) => r === low || r === high)).toBe(true);
    const highs = rounded.filter((r) => r === high).length;
    const sigma = Math.sqrt(pHigh * (1 - pHigh) * N);
    expect(Math.abs(highs - pHigh * N)).toBeLessThan(4 * sigma);
    const mean = rounded.reduce((s, r) => s + r, 0) / N;
    expect(Math.abs(mean - exact)).toBeLessThan((4 * sigma * Math.abs(high - low)) / N);
  });

  it('keeps float16 values and overflows only beyond the last float16 interval', () => {
    const values = new Float32Array(VALUES);
    expect(Array.from(roundFloat16Array(values, undefined, new RandomSource(1)))).toEqual(Array.from(values));
    const nearMax = roundMany(65510, 3);
    expect(nearMax.every((r) => r === 65504 || r === Infinity)).toBe(true);
  });

  it('is deterministic under a seed and differs between seeds', () => {
    const x = 1 + 0.5 * 2 ** -10;
    expect(Array.from(roundMany(x, 42))).toEqual(Array.from(roundMany(x, 42)));
    expect(Array.from(roundMany(x, 42))).not.toEqual(Array.from(roundMany(x, 43)));
  });
});
