/**
 * Poplar's `RuntimeOptions`: option flags that adjust how an engine runs,
 * given to `Engine.prepare(device, runOptions)` (for every run from then on)
 * or `Engine.run(program, debugName, runOptions)` (for that run). They
 * override the engine's own runtime options, its defaults; the environment's
 * (`POPLAR_RUNTIME_OPTIONS`) override both. The options are those of
 * lib/options/runtime_options.ts, checked when the object is made.
 */
import { PoptfjsError } from '../common/errors.js';
import { runtimeFlags } from '../options/runtime_options.js';

/** A set of runtime option flags, checked by name and value (Poplar's `invalid_option` otherwise). */
export class RuntimeOptions {
  /** The flags, as given. */
  readonly flags: Readonly<Record<string, string>>;

  constructor(flags: Readonly<Record<string, string>> = {}) {
    this.flags = Object.freeze(runtimeFlags(flags, { name: 'RuntimeOptions', error: (message) => new PoptfjsError(message, { type: 'invalid_option' }) }));
  }
}
