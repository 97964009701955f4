/**
 * Conversions between float32 values and the 16-bit float formats ONNX
 * stores: IEEE half precision (FLOAT16) and bfloat16 (BFLOAT16), both
 * rounding to nearest even.
 */

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** The float value of IEEE half-precision bits. */
export function halfBitsToFloat(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  if (exponent === 0) return sign * fraction * 2 ** -24;
  if (exponent === 0x1f) return fraction === 0 ? sign * Infinity : NaN;
  return sign * (1 + fraction / 1024) * 2 ** (exponent - 15);
}

/** The IEEE half-precision bits nearest to `value` (ties to even). */
export function floatToHalfBits(value: number): number {
  f32[0] = value;
  const x = u32[0]!;
  const sign = (x >>> 16) & 0x8000;
  const exponent = (x >>> 23) & 0xff;
  let mantissa = x & 0x7fffff;
  if (exponent === 0xff) return sign | 0x7c00 | (mantissa ? 0x200 : 0);
  let e = exponent - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mantissa |= 0x800000;
    const shift = 14 - e;
    const half = mantissa >> shift;
    const rest = mantissa & ((1 << shift) - 1);
    const midpoint = 1 << (shift - 1);
    const rounded = rest > midpoint || (rest === midpoint && half & 1) ? half + 1 : half;
    return sign | rounded;
  }
  const half = mantissa >> 13;
  const rest = mantissa & 0x1fff;
  let bits = (e << 10) | half;
  if (rest > 0x1000 || (rest === 0x1000 && half & 1)) bits++;
  e = bits >> 10;
  return sign | (e >= 0x1f ? 0x7c00 : bits);
}

/** The float value of bfloat16 bits. */
export function bfloat16BitsToFloat(bits: number): number {
  u32[0] = (bits & 0xffff) << 16;
  return f32[0]!;
}

/** The bfloat16 bits nearest to `value` (ties to even). */
export function floatToBfloat16Bits(value: number): number {
  f32[0] = value;
  const x = u32[0]!;
  if ((x & 0x7f800000) === 0x7f800000 && (x & 0x7fffff) !== 0) return (x >>> 16) | 0x40;
  const rounded = x + 0x7fff + ((x >>> 16) & 1);
  return (rounded >>> 16) & 0xffff;
}
