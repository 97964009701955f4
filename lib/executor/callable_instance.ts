/**
 * A base class whose instances are functions: calling the instance calls its
 * `run` method, so a wrapped model can be used like the model itself
 * (`await executor(x)`), as in PopTorch.
 */

/** Instances are callable; calling one forwards to `this.run(...args)`. */
export abstract class CallableInstance {
  constructor() {
    const self = ((...args: unknown[]) => (self as unknown as { run(...a: unknown[]): unknown }).run(...args)) as unknown as CallableInstance;
    Object.setPrototypeOf(self, new.target.prototype);
    // biome-ignore lint/correctness/noConstructorReturn: the instance is the function built above, so that it can be called.
    return self;
  }
}
