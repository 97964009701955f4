/**
 * The op attributes set while a model runs: the state behind
 * `ops.Attribute`, PopTorch's `poptorch.Attribute`. Nodes traced while
 * scopes are open carry the attributes of all of them (an inner scope's value
 * of a key replaces the outer one's until it closes), as PopTorch hands them
 * to the PopART ops it lowers, e.g. outlining attributes
 * (`__outline: { layer: 'embedding' }`). Outside tracing the scopes are kept
 * but change nothing.
 */
import { PoptfjsError } from '../common/errors.js';

/** Op attributes: for each attribute (`__outline`), its keys and string values. */
export type OpAttributes = Readonly<Record<string, Readonly<Record<string, string>>>>;

const open: OpAttributes[] = [];

/** The attributes of the open scopes merged (inner over outer), or undefined when none is open. */
export function currentOpAttributes(): OpAttributes | undefined {
  if (open.length === 0) return undefined;
  const merged: Record<string, Record<string, string>> = {};
  for (const scope of open) for (const [attribute, values] of Object.entries(scope)) merged[attribute] = { ...merged[attribute], ...values };
  return merged;
}

/** @internal Opens a scope of `attributes` (checked by the caller); returns its depth, for {@link closeOpAttributes}. */
export function openOpAttributes(attributes: OpAttributes): number {
  open.push(attributes);
  return open.length;
}

/** @internal Closes the innermost scope, which must be `attributes` at `depth`: scopes close in the order opposite to their opening. */
export function closeOpAttributes(attributes: OpAttributes, depth: number): void {
  if (open.length !== depth || open[depth - 1] !== attributes) {
    throw new PoptfjsError(
      `Attribute: a scope was closed while another one was the innermost open one; scopes close in the order opposite to their opening (use Attribute.run, or \`using _ = new Attribute(...)\` in a block)`,
      { type: 'annotation', location: 'Attribute' },
    );
  }
  open.pop();
}
