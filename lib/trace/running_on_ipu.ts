/**
 * `isRunningOnIpu()`: true while poptfjs runs (traces) a model, false in plain tfjs.
 * A model can use it to take a different path on the simulated IPU, as in PopTorch.
 */
let depth = 0;

/** True while the calling code runs inside poptfjs (being traced for the simulated IPU). */
export function isRunningOnIpu(): boolean {
  return depth > 0;
}

/** @internal Runs `fn` with {@link isRunningOnIpu} true. */
export function runningOnIpu<T>(fn: () => T): T {
  depth++;
  try {
    return fn();
  } finally {
    depth--;
  }
}
