/**
 * Attributes an optimizer does not have, found when its values are used
 * (PopTorch's unexpected optimizer attributes): a key added to a parameter
 * group after construction, such as the `initialLr` (or torch's
 * `initial_lr`) a learning-rate scheduler adds, or a property set on the
 * optimizer. They are errors, unless the executor's options relax the checks
 * (`Options.relaxOptimizerAttributesChecks(true)`): then each is ignored with
 * one warning.
 */
import { optimizerError } from './optimizer_options.js';

/** What an optimizer does with unknown attributes: refuse them (default) or ignore them with a warning. */
export type UnknownAttributeCheck = 'refuse' | 'warn';

/**
 * `values` without the keys `isKnown` rejects: an error naming the first
 * (`check` `'refuse'`), or each dropped with `warn` (`check` `'warn'`).
 * `where` names the optimizer (and group), `expected` lists its attributes.
 */
export function withoutUnknownAttributes(
  where: string,
  values: Readonly<Record<string, unknown>>,
  isKnown: (key: string) => boolean,
  expected: readonly string[],
  check: UnknownAttributeCheck,
  warn: (message: string) => void,
): Record<string, unknown> {
  const known: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(values)) {
    if (isKnown(key)) {
      known[key] = value;
    } else if (check === 'refuse') {
      throw optimizerError(
        `${where}: unknown attribute '${key}'; expected ${expected.join(', ')} (Options.relaxOptimizerAttributesChecks(true) ignores unknown attributes with a warning)`,
      );
    } else {
      warn(`${where}: ignoring unknown attribute '${key}' (relaxOptimizerAttributesChecks); expected ${expected.join(', ')}`);
    }
  }
  return known;
}
