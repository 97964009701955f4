/**
 * The rules setters check their arguments against, and the errors they throw.
 *
 * A rule is a zod schema plus the JavaScript type the argument must have and
 * a phrase saying what is expected. A value of the wrong JavaScript type is a
 * `TypeError`; a value of the right type outside the rule is a `RangeError`.
 * A rule for objects (a class instance) refuses anything with a `TypeError`.
 * Both messages name the method, the value and what was expected:
 * `Options.deviceIterations: expected a positive integer, got 0`.
 */
import { z } from 'zod';

/** The JavaScript type of a value as rules see it: `typeof`, plus `null` and `array`. */
export type JsType = 'number' | 'string' | 'boolean' | 'object' | 'array' | 'null' | 'undefined' | 'function' | 'bigint' | 'symbol';

/** What a setter accepts for one argument. */
export interface ArgumentRule<T> {
  /** The schema the value must pass. */
  readonly schema: z.ZodType<T>;
  /** The JavaScript type an acceptable value has. */
  readonly jsType: JsType;
  /** What is expected, as a phrase: `a positive integer`. */
  readonly expected: string;
}

/** The JavaScript type of `value`, distinguishing `null` and arrays from objects. */
function jsTypeOf(value: unknown): JsType {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

const MAX_DESCRIPTION = 80;

function truncate(text: string): string {
  return text.length > MAX_DESCRIPTION ? `${text.slice(0, MAX_DESCRIPTION - 3)}...` : text;
}

/** A short, readable description of `value` for error messages: `"4"`, `-1`, `a StageSpec`. */
export function describeValue(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return truncate(JSON.stringify(value));
    case 'number':
    case 'boolean':
      return String(value);
    case 'bigint':
      return `${value}n`;
    case 'undefined':
      return 'undefined';
    case 'symbol':
      return value.toString();
    case 'function':
      return value.name ? `the function ${value.name}` : 'a function';
    default:
      break;
  }
  if (value === null) return 'null';
  if (Array.isArray(value)) {
    try {
      return `the array ${truncate(JSON.stringify(value))}`;
    } catch {
      return `an array of ${value.length} items`;
    }
  }
  const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
  if (typeof name === 'string' && name !== 'Object' && name !== '') return `${/^[AEIOU]/.test(name) ? 'an' : 'a'} ${name}`;
  try {
    return `the object ${truncate(JSON.stringify(value))}`;
  } catch {
    return 'an object';
  }
}

/**
 * Checks `value` against `rule` and returns it as parsed; throws a `TypeError`
 * (wrong JavaScript type, or any refused object) or `RangeError` (right type,
 * unacceptable value) whose
 * message starts with `where`, e.g. `Options.replicationFactor`.
 */
export function checkArgument<T>(rule: ArgumentRule<T>, value: unknown, where: string): T {
  const result = rule.schema.safeParse(value);
  if (result.success) return result.data;
  const message = `${where}: expected ${rule.expected}, got ${describeValue(value)}`;
  const rightType = rule.jsType !== 'object' && jsTypeOf(value) === rule.jsType;
  throw rightType ? new RangeError(message) : new TypeError(message);
}

/** An integer of at least 1. */
export const positiveInteger: ArgumentRule<number> = {
  schema: z.number().int().min(1),
  jsType: 'number',
  expected: 'a positive integer',
};

/** An integer of at least 0. */
export const nonNegativeInteger: ArgumentRule<number> = {
  schema: z.number().int().min(0),
  jsType: 'number',
  expected: 'a non-negative integer',
};

/** `true` or `false`. */
export const flag: ArgumentRule<boolean> = {
  schema: z.boolean(),
  jsType: 'boolean',
  expected: 'a boolean (true or false)',
};

/** A string that is not empty. */
export const nonEmptyString: ArgumentRule<string> = {
  schema: z.string().min(1),
  jsType: 'string',
  expected: 'a non-empty string',
};

/** A rule accepting the values of a string enumeration such as `OutputMode`, listed as `OutputMode.All, ...`. */
export function enumRule<const E extends Record<string, string>>(enumeration: E, enumName: string): ArgumentRule<E[keyof E]> {
  const members = Object.entries(enumeration);
  const values = members.map(([, value]) => value) as [E[keyof E], ...E[keyof E][]];
  return {
    schema: z.enum(values) as unknown as z.ZodType<E[keyof E]>,
    jsType: 'string',
    expected: `one of ${members.map(([key]) => `${enumName}.${key}`).join(', ')}`,
  };
}

/** A rule accepting instances of `cls`, described as `expected` (`a TensorLocationSettings`). */
export function instanceRule<T>(cls: abstract new (...args: never[]) => T, expected: string): ArgumentRule<T> {
  return { schema: z.custom<T>((value) => value instanceof cls), jsType: 'object', expected };
}

/** A rule accepting one of a few listed values of one JavaScript type. */
export function oneOfValues<const V extends string | number>(values: readonly V[], jsType: 'string' | 'number'): ArgumentRule<V> {
  return {
    schema: z.custom<V>((value) => (values as readonly unknown[]).includes(value)),
    jsType,
    expected: `one of ${values.map((value) => JSON.stringify(value)).join(', ')}`,
  };
}
