/**
 * The zod rules optimizer options are checked against, and the parser that
 * turns an options object into validated values with clear errors:
 * `optim.SGD: unknown option 'momentun'; expected lr, momentum, ...`.
 */
import { z } from 'zod';
import { PoptfjsError } from '../lib/common/errors.js';
import { describeValue } from '../lib/option_vocabulary/argument_rules.js';

/** The precision an optimizer keeps gradients or state in (PopTorch's `accum_type` and friends). */
export type AccumType = 'float32' | 'float16';

/** A hyper-parameter value: a number, a flag, a pair (`betas`) or a precision. */
export type HyperValue = number | boolean | readonly [number, number] | AccumType;

/** The zod shape of a set of hyper-parameters, with their defaults. */
export type HyperShape = Record<string, z.ZodType<HyperValue>>;

/** A learning rate, weight decay, momentum...: a finite number >= 0. */
export const nonNegative = (defaultValue: number) => z.number().nonnegative().default(defaultValue);
/** A finite number > 0. */
export const positive = (defaultValue: number) => z.number().positive().default(defaultValue);
/** A number > 0, or Infinity (no limit). */
export const positiveOrInfinity = (defaultValue: number) => z.union([z.number().positive(), z.literal(Infinity)]).default(defaultValue);
/** A decay rate in [0, 1). */
const decayRate = z.number().min(0).lt(1);
/** Adam's `(beta1, beta2)`, each in [0, 1). */
export const betas = (defaultValue: [number, number]) => z.tuple([decayRate, decayRate]).default(defaultValue);
/** A flag. */
export const flag = (defaultValue: boolean) => z.boolean().default(defaultValue);
/** `'float32'` or `'float16'`. */
export const accumType = () => z.enum(['float32', 'float16']).default('float32');

/** The values of a hyper-parameter shape. */
export type HyperValues<S extends HyperShape> = { -readonly [K in keyof S]: z.output<S[K]> };

/** True if two hyper-parameter values are equal (pairs element by element). */
export function sameHyperValue(a: HyperValue, b: HyperValue): boolean {
  return Array.isArray(a) && Array.isArray(b) ? a.length === b.length && a.every((x, i) => x === b[i]) : a === b;
}

/** The error an optimizer raises for options it cannot take. */
export function optimizerError(message: string): PoptfjsError {
  return new PoptfjsError(message, { type: 'optimizer' });
}

/**
 * Checks `values` against `shape` (no other key allowed) and returns them
 * with defaults filled in. `where` names the optimizer (and group) in errors;
 * `misplaced` maps keys that exist elsewhere to a hint for the user.
 */
export function parseHyperValues<S extends HyperShape>(
  where: string,
  shape: S,
  values: Record<string, unknown>,
  misplaced: (key: string) => string | undefined = () => undefined,
): HyperValues<S> {
  const result = z.strictObject(shape).safeParse(values);
  if (result.success) return result.data as HyperValues<S>;
  const issue = result.error.issues[0]!;
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0]!;
    throw optimizerError(misplaced(key) ?? `${where}: unknown option '${key}'; expected ${Object.keys(shape).join(', ')}`);
  }
  const key = String(issue.path[0]);
  throw optimizerError(`${where}: ${key} = ${describeValue(values[key])} is invalid: ${issue.message.replace(/^Invalid input: /, '')}`);
}
