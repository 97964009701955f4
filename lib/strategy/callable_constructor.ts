/**
 * Classes that can also be called as factories, as PopTorch's `Stage("A")` or
 * `PipelinedExecution(...)` are: the same object builds with or without `new`.
 */

/** A function that builds a `T` whether it is called or used with `new`, and that `instanceof` recognises. */
export interface CallableConstructor<A extends unknown[], T> {
  /** Builds a `T` (factory style, as in PopTorch). */
  (...args: A): T;
  /** Builds a `T`. */
  new (...args: A): T;
  /** The prototype of the built objects, so that `x instanceof Factory` works. */
  readonly prototype: T;
}

/** Wraps `cls` so that calling it, with or without `new`, builds a `T`; named `name`. */
export function callableConstructor<A extends unknown[], T extends object>(name: string, cls: new (...args: A) => T): CallableConstructor<A, T> {
  const factory = function (...args: A): T {
    return new cls(...args);
  };
  Object.defineProperty(factory, 'name', { value: name });
  factory.prototype = cls.prototype;
  return factory as unknown as CallableConstructor<A, T>;
}
