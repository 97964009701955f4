/**
 * Attributes an optimizer does not have, found when its values are used
 * (PopTorch's unexpected optimizer attributes, `OptimizerAttrTracker`): a key
 * added to a parameter group after construction, such as the `initialLr` (or
 * torch's `initial_lr`) a learning-rate scheduler adds, a `step` count set on
 * the optimizer, or a group's `lossScaling` (an attribute of the whole
 * optimizer, not of a group).
 *
 * As in PopTorch, they are ignored: those present when an executor first
 * takes the optimizer silently, those that appear later with one warning
 * each (one debug message under `Options.relaxOptimizerAttributesChecks(true)`).
 * The optimizer's constructor still refuses options it does not know.
 */
import { getLogger } from '../lib/common/log.js';

const log = getLogger('poptfjs');

/** How an executor reports attributes its optimizer does not have: a warning (default) or a debug message (`relaxOptimizerAttributesChecks`). */
export type UnknownAttributeCheck = 'warn' | 'debug';

/** Where an unexpected attribute was set: on the optimizer, or in parameter group `group`. */
export type AttributePlace = { readonly kind: 'optimizer' } | { readonly kind: 'group'; readonly group: number };

/** The unexpected attributes of one optimizer: those it ignores silently and the messages it gave. */
export class UnexpectedAttributes {
  #check: UnknownAttributeCheck = 'warn';
  /** Names ignored silently, per place kind (PopTorch records one list for the optimizer and one for all groups). */
  readonly #expected = { optimizer: new Set<string>(), group: new Set<string>() };
  readonly #told = new Set<string>();

  /**
   * An executor takes the optimizer: from now on report unexpected
   * attributes as `check` says; with `record`, the unexpected attributes
   * present now (`present`) are ignored silently from now on.
   */
  takenBy(check: UnknownAttributeCheck, record: boolean, present: ReadonlyArray<{ place: AttributePlace; key: string }>): void {
    this.#check = check;
    if (record) for (const { place, key } of present) this.#expected[place.kind].add(key);
  }

  /**
   * `values` without the keys `isKnown` rejects, each reported once (unless
   * recorded by {@link UnexpectedAttributes.takenBy}). `type` names the
   * optimizer, `expected` lists the attributes of the place, `hint` says
   * where a misplaced attribute belongs.
   */
  without(
    type: string,
    place: AttributePlace,
    values: Readonly<Record<string, unknown>>,
    isKnown: (key: string) => boolean,
    expected: readonly string[],
    hint: (key: string) => string | undefined = () => undefined,
  ): Record<string, unknown> {
    const known: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(values)) {
      if (isKnown(key)) known[key] = value;
      else if (!this.#expected[place.kind].has(key)) this.#report(type, place, key, expected, hint(key));
    }
    return known;
  }

  #report(type: string, place: AttributePlace, key: string, expected: readonly string[], hint: string | undefined): void {
    const where = place.kind === 'optimizer' ? 'optimizer attribute' : `group ${place.group} attribute`;
    const message = `optim.${type}: ignoring unexpected ${where} '${key}'; ${hint ?? `the ${place.kind === 'optimizer' ? "optimizer's" : "group's"} attributes are ${expected.join(', ')}`}`;
    if (this.#told.has(message)) return;
    this.#told.add(message);
    if (this.#check === 'warn') log.warn(message);
    else log.debug(message);
  }
}
