/**
 * A base class whose instances are functions: calling the instance calls its
 * `run` method, so a wrapped model can be used like the model itself
 * (`await executor(x)`), as in PopTorch. A property the instance does not
 * have is read from the object {@link CallableInstance.forwardedTo} names,
 * as PopTorch's `PoplarExecutor.__getattr__` reads it from the wrapped
 * module.
 */

/** The prototypes whose properties every function has: they never shadow a forwarded property. */
const SHARED_PROTOTYPES: ReadonlySet<object> = new Set([Function.prototype, Object.prototype]);

/** The own properties every arrow function has. */
const FUNCTION_OWN_PROPERTIES: ReadonlySet<PropertyKey> = new Set(['name', 'length', 'prototype']);

/** True when `instance` itself (or its class) defines `key`, not only what every function or object has. */
function ownsProperty(instance: object, key: PropertyKey): boolean {
  if (Object.hasOwn(instance, key)) return typeof instance !== 'function' || !FUNCTION_OWN_PROPERTIES.has(key);
  for (let p = Object.getPrototypeOf(instance) as object | null; p !== null && !SHARED_PROTOTYPES.has(p); p = Object.getPrototypeOf(p) as object | null) {
    if (Object.hasOwn(p, key)) return true;
  }
  return false;
}

/** Instances are callable; calling one forwards to `this.run(...args)`. */
export abstract class CallableInstance {
  constructor() {
    const self = ((...args: unknown[]) => (self as unknown as { run(...a: unknown[]): unknown }).run(...args)) as unknown as CallableInstance;
    Object.setPrototypeOf(self, new.target.prototype);
    // biome-ignore lint/correctness/noConstructorReturn: the instance is the function built above (behind a proxy that forwards what it lacks), so that it can be called.
    return new Proxy(self, {
      get(target, key, receiver) {
        if (ownsProperty(target, key)) return Reflect.get(target, key, receiver);
        const forwarded = target.forwardedTo();
        if (forwarded === undefined || !ownsProperty(forwarded, key)) return Reflect.get(target, key, receiver);
        const value: unknown = Reflect.get(forwarded, key);
        return typeof value === 'function' ? value.bind(forwarded) : value;
      },
      has(target, key) {
        const forwarded = target.forwardedTo();
        return Reflect.has(target, key) || (forwarded !== undefined && ownsProperty(forwarded, key));
      },
    });
  }

  /** The object whose properties the instance shows where it has none of its own; none by default. */
  protected forwardedTo(): object | undefined {
    return undefined;
  }
}
