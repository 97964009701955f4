/**
 * `Attribute`: PopTorch's `poptorch.Attribute`, attributes for the ops of a
 * part of a model (such as PopART's outlining attributes).
 */
import { PoptfjsError } from '../lib/common/errors.js';
import { describeValue } from '../lib/option_vocabulary/argument_rules.js';
import { closeOpAttributes, type OpAttributes, openOpAttributes } from '../lib/trace/op_attributes.js';

function invalid(message: string): PoptfjsError {
  return new PoptfjsError(`Attribute: ${message}`, { type: 'annotation', location: 'Attribute' });
}

function checkAttributes(attributes: unknown): OpAttributes {
  if (typeof attributes !== 'object' || attributes === null || Array.isArray(attributes)) {
    throw invalid(`expected an object of attribute: { key: value } such as { __outline: { layer: 'embedding' } }, got ${describeValue(attributes)}`);
  }
  const checked: Record<string, Record<string, string>> = {};
  for (const [attribute, values] of Object.entries(attributes)) {
    if (typeof values !== 'object' || values === null || Array.isArray(values)) {
      throw invalid(`attribute '${attribute}' must be an object of key: string value, got ${describeValue(values)}`);
    }
    checked[attribute] = {};
    for (const [key, value] of Object.entries(values)) {
      if (typeof value !== 'string') throw invalid(`${attribute}.${key} must be a string, as PopTorch's attribute values are, got ${describeValue(value)}`);
      checked[attribute][key] = value;
    }
  }
  return checked;
}

/**
 * A scope of op attributes: every node traced while it is open carries
 * `attributes` (for each attribute, such as PopART's `__outline`, its keys
 * and string values), as PopTorch's
 * `with poptorch.Attribute(__outline={"layer": "embedding"}):` sets them on
 * the ops it lowers. Scopes nest: an inner
 * scope's value of a key replaces the outer one's until it closes. The
 * backward nodes of those nodes carry the same attributes. They appear in
 * `executor.irText()` (`# attributes __outline{layer: embedding}`) and travel
 * with the executable; the simulated IPU does not outline code, so they
 * change no number, memory or time. Use {@link Attribute.run}, or
 * `using _ = new Attribute({...})` in a block.
 */
export class Attribute implements Disposable {
  /** The attributes this scope sets. */
  readonly attributes: OpAttributes;
  private readonly depth: number;
  private closed = false;

  /** Opens a scope of `attributes` until this object is disposed. */
  constructor(attributes: Record<string, Record<string, string>>) {
    this.attributes = checkAttributes(attributes);
    this.depth = openOpAttributes(this.attributes);
  }

  /** Runs `fn` inside a scope of `attributes` and returns its result (the scope closes also when `fn` throws). */
  static run<T>(attributes: Record<string, Record<string, string>>, fn: () => T): T {
    using _scope = new Attribute(attributes);
    return fn();
  }

  /** Closes the scope; it must be the innermost one open. Closing it again does nothing. */
  [Symbol.dispose](): void {
    if (this.closed) return;
    closeOpAttributes(this.attributes, this.depth);
    this.closed = true;
  }
}
