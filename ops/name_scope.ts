/**
 * `NameScope`: PopTorch's `poptorch.NameScope`, names for the parts of a
 * model.
 */
import { PoptfjsError } from '../lib/common/errors.js';
import { closeNameScope, openNameScope } from '../lib/trace/name_scope.js';

function checkName(name: unknown): string {
  if (typeof name !== 'string')
    throw new PoptfjsError(`NameScope: the name must be a string, got ${name === null ? 'null' : typeof name}`, { type: 'annotation', location: 'NameScope' });
  if (name === '' || name.includes('/')) {
    throw new PoptfjsError(`NameScope: the name must be non-empty and without '/' (nested scopes are joined by '/'), got ${JSON.stringify(name)}`, {
      type: 'annotation',
      location: 'NameScope',
    });
  }
  return name;
}

/**
 * A name scope: every node traced while it is open is named after it, its
 * name prefixed by the scope's, nested scopes joined by `/` (`encoder/attention`),
 * as PopTorch names the ops of a `with poptorch.NameScope(name):` block. The
 * backward nodes of those nodes carry the same scope. The names appear in
 * `executor.irText()` (`# scope encoder/attention`), in error messages about
 * a node, and in the memory plan's peak, which the summary and JSON reports
 * show (`working values at the peak (encoder/attention/BatchMatMul in F0:0)`).
 * Use {@link NameScope.run}, or `using _ = new NameScope(name)` in a block.
 */
export class NameScope implements Disposable {
  /** The scope's own name (without its enclosing scopes'). */
  readonly name: string;
  private readonly depth: number;
  private closed = false;

  /** Opens scope `name` until this object is disposed. */
  constructor(name: string) {
    this.name = checkName(name);
    this.depth = openNameScope(this.name);
  }

  /** Runs `fn` inside scope `name` and returns its result (the scope closes also when `fn` throws). */
  static run<T>(name: string, fn: () => T): T {
    using _scope = new NameScope(name);
    return fn();
  }

  /** Closes the scope; it must be the innermost one open. Closing it again does nothing. */
  [Symbol.dispose](): void {
    if (this.closed) return;
    closeNameScope(this.name, this.depth);
    this.closed = true;
  }
}
