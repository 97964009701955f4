/**
 * Which optimizer attributes are variable and which are constant
 * (PopTorch's `VariableAttributes`, reached as `opt.variableAttrs`).
 *
 * A constant attribute is compiled into the program: changing it after the
 * model was compiled and calling `setOptimizer` is an error. A variable one
 * is an input of the program: a new value takes effect on the next run
 * without recompiling. Attributes passed explicitly to the optimizer's
 * constructor (or in one of its `paramGroups`) are variable, the others
 * constant; `lr` is always variable.
 */
import { optimizerError } from './optimizer_options.js';

/** The attribute that is variable whatever the user says. */
const ALWAYS_VARIABLE = 'lr';

/** Tracks the variable attributes of one optimizer. */
export class VariableAttributes {
  readonly #allowed: readonly string[];
  readonly #variable = new Set<string>();

  /**
   * @param variable the attributes that start variable
   * @param allowed every attribute that can be variable
   */
  constructor(variable: Iterable<string>, allowed: readonly string[]) {
    this.#allowed = [...allowed];
    for (const name of variable) if (allowed.includes(name)) this.#variable.add(name);
    this.#variable.add(ALWAYS_VARIABLE);
  }

  /** True if `attr` is compiled into the program. */
  isConstant(attr: string): boolean {
    return !this.isVariable(attr);
  }

  /** True if `attr` can change between runs without recompiling. */
  isVariable(attr: string): boolean {
    this.#check(attr, 'isVariable');
    return this.#variable.has(attr);
  }

  /** Compiles `attr` into the program (call before the model is compiled). */
  markAsConstant(attr: string): void {
    this.#check(attr, 'markAsConstant');
    if (attr === ALWAYS_VARIABLE) throw optimizerError(`variableAttrs.markAsConstant: '${ALWAYS_VARIABLE}' is always variable`);
    this.#variable.delete(attr);
  }

  /** Makes `attr` an input of the program (call before the model is compiled). */
  markAsVariable(attr: string): void {
    this.#check(attr, 'markAsVariable');
    this.#variable.add(attr);
  }

  /** A copy that changes independently of this one. */
  clone(): VariableAttributes {
    const copy = new VariableAttributes([], this.#allowed);
    for (const name of this.#variable) copy.#variable.add(name);
    return copy;
  }

  /** The variable attributes. */
  variableNames(): string[] {
    return this.#allowed.filter((a) => this.#variable.has(a));
  }

  #check(attr: string, method: string): void {
    if (!this.#allowed.includes(attr)) {
      throw optimizerError(`variableAttrs.${method}: unknown attribute '${attr}'; the attributes are ${this.#allowed.join(', ')}`);
    }
  }
}
