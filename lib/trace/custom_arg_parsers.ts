/**
 * Custom argument parsers: PopTorch's `ICustomArgParser` and
 * `registerCustomArgParser`, which let instances of a user's class be the
 * inputs of a model. A parser yields the tensors an instance holds, in a
 * fixed order, and builds an instance again from tensors in that order; the
 * device sees only the tensors, and the model is called with the instance
 * the parser rebuilds around the traced tensors.
 */
import type * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../common/errors.js';

/** How instances of a class are taken apart into tensors and built again (PopTorch's `ICustomArgParser`). */
export interface CustomArgParser<T = unknown> {
  /** Every tensor `value` holds, in an order that is always the same. */
  yieldTensors(value: T): Iterable<tf.Tensor>;
  /** A new instance like `original`, holding the tensors `tensors` gives, taken in the order of {@link CustomArgParser.yieldTensors}. */
  reconstruct(original: T, tensors: Iterator<tf.Tensor>): T;
}

/** A class whose instances a parser takes. */
// biome-ignore lint/suspicious/noExplicitAny: any class, whatever its constructor's parameters.
export type ArgumentClass<T = unknown> = abstract new (...args: any[]) => T;

const parsers = new Map<ArgumentClass, CustomArgParser>();

/**
 * Registers `parser` for the instances of `type` (and of its subclasses
 * without a parser of their own), replacing any it had; `null` removes it,
 * as PopTorch's `registerCustomArgParser(type, None)`.
 */
export function registerCustomArgParser<T>(type: ArgumentClass<T>, parser: CustomArgParser<T> | null): void {
  if (typeof type !== 'function') throw new PoptfjsError(`registerCustomArgParser: type must be a class, got ${typeof type}`, { type: 'input' });
  if (parser === null) {
    parsers.delete(type);
    return;
  }
  const candidate = parser as Partial<CustomArgParser<T>> | undefined;
  if (typeof candidate?.yieldTensors !== 'function' || typeof candidate.reconstruct !== 'function') {
    throw new PoptfjsError('registerCustomArgParser: the parser must implement CustomArgParser (yieldTensors(value) and reconstruct(original, tensors))', {
      type: 'input',
    });
  }
  parsers.set(type, parser as CustomArgParser);
}

/** The parser of `value`: its class's, else that of the nearest registered class it is an instance of; undefined when none. */
export function customArgParserOf(value: unknown): CustomArgParser | undefined {
  if (typeof value !== 'object' || value === null || parsers.size === 0) return undefined;
  let proto = Object.getPrototypeOf(value) as { constructor?: unknown } | null;
  while (proto !== null && proto !== Object.prototype) {
    const parser = parsers.get(proto.constructor as ArgumentClass);
    if (parser) return parser;
    proto = Object.getPrototypeOf(proto) as { constructor?: unknown } | null;
  }
  return undefined;
}
