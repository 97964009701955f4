import { describe, expect, it } from 'vitest';
import { PoptfjsError } from '../../lib/common/errors.js';
import { parseLossless, stringifyLossless } from '../../lib/proto/lossless_json.js';

describe('lossless JSON', () => {
  it('reads back NaN, the infinities and -0, at any depth', () => {
    const text = stringifyLossless({ a: Number.NaN, b: [Number.POSITIVE_INFINITY, { c: Number.NEGATIVE_INFINITY }], d: -0, e: 1.5 });
    expect(text).toBe('{"a":{"$number":"NaN"},"b":[{"$number":"Infinity"},{"c":{"$number":"-Infinity"}}],"d":{"$number":"-0"},"e":1.5}');
    const value = parseLossless(text, 'test') as { a: number; b: [number, { c: number }]; d: number; e: number };
    expect(value.a).toBeNaN();
    expect(value.b).toEqual([Number.POSITIVE_INFINITY, { c: Number.NEGATIVE_INFINITY }]);
    expect(Object.is(value.d, -0)).toBe(true);
    expect(value.e).toBe(1.5);
  });

  it('reads a special number whose key is written with escapes, and leaves other objects as they are', () => {
    expect(parseLossless('{"x":{"\\u0024number":"NaN"}}', 'test')).toEqual({ x: Number.NaN });
    expect(parseLossless('{"x":{"$number":"NaN","y":1},"z":{"$number":"seven"},"w":"\\u00e9"}', 'test')).toEqual({
      x: { $number: 'NaN', y: 1 },
      z: { $number: 'seven' },
      w: 'é',
    });
    expect(parseLossless('{"plain":[1,{"k":null}]}', 'test')).toEqual({ plain: [1, { k: null }] });
  });

  it('refuses text that is not JSON, naming where it is', () => {
    expect(() => parseLossless('{"a":', 'model.poptfjs options')).toThrow(PoptfjsError);
    expect(() => parseLossless('{"a":', 'model.poptfjs options')).toThrow(/^model\.poptfjs options: invalid JSON \(/);
  });
});
