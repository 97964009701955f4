/**
 * The name scopes open while a model runs: the state behind `ops.NameScope`.
 * Nodes traced inside are annotated with the scopes' names joined by `/`
 * (`encoder/layer0`), as PopTorch prefixes the names of the ops traced in a
 * `poptorch.NameScope`. Outside tracing the scopes are kept but change
 * nothing.
 */
import { PoptfjsError } from '../common/errors.js';

const open: string[] = [];

/** The names of the open scopes joined by `/`, or undefined when none is open. */
export function currentNameScope(): string | undefined {
  return open.length > 0 ? open.join('/') : undefined;
}

/** @internal Opens scope `name` (checked by the caller); returns its depth, for {@link closeNameScope}. */
export function openNameScope(name: string): number {
  open.push(name);
  return open.length;
}

/** @internal Closes the innermost scope, which must be `name` at `depth`: scopes close in the order opposite to their opening. */
export function closeNameScope(name: string, depth: number): void {
  if (open.length !== depth || open[depth - 1] !== name) {
    const innermost = open[open.length - 1];
    throw new PoptfjsError(
      `NameScope '${name}' was closed while ${innermost === undefined ? 'no scope' : `scope '${innermost}'`} was the innermost open one; ` +
        'scopes close in the order opposite to their opening (use NameScope.run, or `using _ = new NameScope(name)` in a block)',
      { type: 'annotation', location: name },
    );
  }
  open.pop();
}

/** The name of `kernel` run in `scope`: `scope/kernel`, or the kernel alone outside any scope. */
export function scopedName(kernel: string, scope: string | undefined): string {
  return scope === undefined ? kernel : `${scope}/${kernel}`;
}
