/**
 * JSON that keeps every number: `NaN`, `Infinity`, `-Infinity` and `-0`,
 * which plain JSON turns into `null` or `0`, are written as
 * `{"$number": "NaN"}` (and so on) and read back as the numbers they were.
 * Used for the plain-data metadata stored as text inside poptfjs files.
 */
import { PoptfjsError } from '../common/errors.js';

const SPECIAL_NUMBERS: Readonly<Record<string, number>> = { NaN: Number.NaN, Infinity: Number.POSITIVE_INFINITY, '-Infinity': Number.NEGATIVE_INFINITY, '-0': -0 };

/** `value` as lossless JSON text. */
export function stringifyLossless(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v !== 'number' || (Number.isFinite(v) && !Object.is(v, -0))) return v;
    return { $number: Object.is(v, -0) ? '-0' : String(v) };
  });
}

/** The value of lossless JSON text; `where` names the text in errors. */
export function parseLossless(text: string, where: string): unknown {
  try {
    // Without `$number` (spelt out, or with escapes) no object can be a special number: plain JSON.
    if (!text.includes('$number') && !text.includes('\\u')) return JSON.parse(text);
    return JSON.parse(text, (_key, v: unknown) => {
      if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
      const keys = Object.keys(v);
      const special = (v as { $number?: unknown }).$number;
      return keys.length === 1 && typeof special === 'string' && special in SPECIAL_NUMBERS ? SPECIAL_NUMBERS[special] : v;
    });
  } catch (error) {
    throw new PoptfjsError(`${where}: invalid JSON (${error instanceof Error ? error.message : String(error)})`, { type: 'file', cause: error });
  }
}
