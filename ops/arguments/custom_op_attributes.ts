/**
 * The attributes of a custom op call, checked as PopTorch checks them:
 * numbers, ASCII strings, or arrays of only numbers or only strings. A
 * number that is not a safe integer is a float attribute, which PopART holds
 * as a float32: one outside float32's range is refused with PopTorch's
 * message (`1.79769e+308 is too high for a float attribute`).
 */
import { PoptfjsError } from '../../lib/common/errors.js';
import type { CustomOpAttribute, CustomOpAttributes } from '../../lib/backend/poptfjs_kernels/custom_op_registry.js';

/** The largest finite float32. */
const FLOAT32_MAX = 3.4028234663852886e38;

/** An error of `customOp`'s arguments. */
export function customOpArgumentError(message: string): PoptfjsError {
  return new PoptfjsError(`customOp: ${message}`, { type: 'trace', location: 'customOp' });
}

function typeName(x: unknown): string {
  return x === null ? 'null' : Array.isArray(x) ? 'array' : typeof x;
}

function checkAscii(text: string, what: string): void {
  if ([...text].some((ch) => ch.charCodeAt(0) >= 128)) throw customOpArgumentError(`${what} ${JSON.stringify(text)} contains non-ASCII characters`);
}

/** `value` as C++'s default stream output writes a double (`%g`, 6 significant digits): `1.79769e+308`, `3.5`. */
function cppDefaultFormat(value: number): string {
  if (!Number.isFinite(value)) return value > 0 ? 'inf' : '-inf';
  const exponent = value === 0 ? 0 : Math.floor(Math.log10(Math.abs(Number(value.toPrecision(6)))));
  if (exponent < -4 || exponent >= 6) {
    const [mantissa, power] = value.toExponential(5).split('e') as [string, string];
    const digits = mantissa.includes('.') ? mantissa.replace(/0+$/, '').replace(/\.$/, '') : mantissa;
    const sign = power.startsWith('-') ? '-' : '+';
    return `${digits}e${sign}${power.replace(/^[+-]/, '').padStart(2, '0')}`;
  }
  return String(Number(value.toPrecision(6)));
}

/** Refuses a float attribute (a number that is not a safe integer) outside float32's range, as PopART does. */
function checkFloatRange(value: number): void {
  if (Number.isSafeInteger(value) || Number.isNaN(value)) return;
  if (value > FLOAT32_MAX) throw customOpArgumentError(`${cppDefaultFormat(value)} is too high for a float attribute (a float32: at most ${FLOAT32_MAX})`);
  if (value < -FLOAT32_MAX) throw customOpArgumentError(`${cppDefaultFormat(value)} is too low for a float attribute (a float32: at least ${-FLOAT32_MAX})`);
}

/** The attributes of a `customOp` call, checked; arrays copied. */
export function checkedCustomOpAttributes(attributes: unknown): CustomOpAttributes {
  if (typeof attributes !== 'object' || attributes === null || Array.isArray(attributes))
    throw customOpArgumentError(`attributes must be an object of name: value, got ${typeName(attributes)}`);
  const checked: Record<string, CustomOpAttribute> = {};
  for (const [key, value] of Object.entries(attributes)) {
    checkAscii(key, 'attribute name');
    const ok =
      typeof value === 'number' ||
      typeof value === 'string' ||
      (Array.isArray(value) && value.every((e) => typeof e === typeof value[0]) && ['number', 'string', 'undefined'].includes(typeof value[0]));
    if (!ok) {
      const mixed = Array.isArray(value) && !value.every((e) => typeof e === typeof value[0]);
      throw customOpArgumentError(
        `attribute '${key}' must be a number, a string, or an array of only numbers or only strings, got ${mixed ? 'an array of mixed types' : typeName(value)}`,
      );
    }
    for (const element of Array.isArray(value) ? value : [value]) {
      if (typeof element === 'string') checkAscii(element, `attribute '${key}'`);
      else checkFloatRange(element as number);
    }
    checked[key] = Array.isArray(value) ? [...(value as number[])] : (value as number | string);
  }
  return checked;
}
