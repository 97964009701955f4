/**
 * The base of PopART's optimizers in dictionary form: hyper-parameters given
 * as `{ defaultLearningRate: [0.01, false], lossScaling: [1, true] }`, each a
 * value and whether it is constant (a bare number is constant), values
 * specific to some weights (`insertSpecific`), and the rule of
 * `updateOptimizerFromHost`: a new optimizer may change the non-constant
 * values only.
 *
 * A session trains with the poptfjs optimizer (optim/) each PopART
 * optimizer maps to: weights with specific values become parameter groups.
 */
import type * as tf from '@tensorflow/tfjs';
import { z } from 'zod';
import { PopartException } from '../common/errors.js';
import type { Optimizer } from '../../optim/optimizer.js';
import { checkedArgument } from './checked_argument.js';

/** A hyper-parameter as given: `[value, isConst]`, or a number (a constant). */
export type OptimizerValueArgument = number | readonly [number, boolean];

/** A hyper-parameter value and whether it is constant (PopART's `OptimizerValue`). */
export interface OptimizerValue {
  readonly value: number;
  readonly isConst: boolean;
}

/** One hyper-parameter of an optimizer: its default-map key, its per-weight key, its unset value and its valid range. */
export interface HyperParameter {
  /** The key in the optimizer's dictionary, e.g. `defaultLearningRate`. */
  readonly key: string;
  /** The key in `insertSpecific`, e.g. `learningRate`; absent for values with one value for all weights (`lossScaling`). */
  readonly specificKey?: string;
  /** The value when not given (constant). */
  readonly unset: number;
  /** The valid values. */
  readonly range: z.ZodNumber;
}

/** Non-negative numbers. */
export const nonNegative = z.number().nonnegative();
/** Positive numbers. */
export const positive = z.number().positive();
/** Decay rates in [0, 1). */
export const decayRate = z.number().min(0).lt(1);

/** The weights an optimizer trains: their host variables by ONNX tensor name. */
export type TrainedWeights = ReadonlyMap<string, tf.Variable>;

function valueSchema(range: z.ZodNumber) {
  return z
    .union([range, z.tuple([range, z.boolean()])])
    .transform((v): OptimizerValue => (typeof v === 'number' ? { value: v, isConst: true } : { value: v[0], isConst: v[1] }));
}

function describe(v: OptimizerValue): string {
  return `${v.value} (${v.isConst ? 'constant' : 'not constant'})`;
}

/** A PopART optimizer: its hyper-parameter values, default and specific to weights. */
export abstract class PopartOptimizer {
  /** The optimizer's PopART class name. */
  abstract readonly type: 'SGD' | 'Adam' | 'Adaptive';
  readonly #parameters: readonly HyperParameter[];
  readonly #defaults: Map<string, OptimizerValue>;
  readonly #specific = new Map<string, Map<string, OptimizerValue>>();

  /**
   * @param where the class name, for messages
   * @param parameters the optimizer's hyper-parameters
   * @param values the dictionary given by the user
   */
  protected constructor(
    private readonly where: string,
    parameters: readonly HyperParameter[],
    values: Readonly<Record<string, OptimizerValueArgument>>,
  ) {
    this.#parameters = parameters;
    const shape = Object.fromEntries(parameters.map((p) => [p.key, valueSchema(p.range).optional()]));
    const given = checkedArgument(z.strictObject(shape), values ?? {}, where) as Record<string, OptimizerValue | undefined>;
    this.#defaults = new Map(parameters.map((p) => [p.key, given[p.key] ?? { value: p.unset, isConst: true }]));
  }

  /** The default value of the dictionary key `key` (e.g. `defaultLearningRate`). */
  value(key: string): OptimizerValue {
    const value = this.#defaults.get(key);
    if (!value) throw new PopartException(`${this.where}: no hyper-parameter '${key}'; the keys are ${[...this.#defaults.keys()].join(', ')}`);
    return value;
  }

  /** The loss scaling value. */
  lossScaling(): OptimizerValue {
    return this.value('lossScaling');
  }

  /**
   * Gives the weight `tensorId` its own values (keys without `default`, e.g.
   * `learningRate`); the others are the defaults as they are now.
   */
  insertSpecific(tensorId: string, values: Readonly<Record<string, OptimizerValueArgument>>): void {
    const specific = this.#parameters.filter((p) => p.specificKey !== undefined);
    const shape = Object.fromEntries(specific.map((p) => [p.specificKey!, valueSchema(p.range).optional()]));
    const given = checkedArgument(z.strictObject(shape), values ?? {}, `${this.where}.insertSpecific('${tensorId}')`) as Record<string, OptimizerValue | undefined>;
    this.#specific.set(tensorId, new Map(specific.map((p) => [p.key, given[p.specificKey!] ?? this.#defaults.get(p.key)!])));
  }

  /** True if `tensorId` (or, without an argument, any weight) has specific values. */
  hasSpecific(tensorId?: string): boolean {
    return tensorId === undefined ? this.#specific.size > 0 : this.#specific.has(tensorId);
  }

  /** The values of a weight: its specific ones, else the defaults, by dictionary key. */
  protected valuesOf(tensorId: string | undefined): Map<string, number> {
    const specific = tensorId === undefined ? undefined : this.#specific.get(tensorId);
    return new Map([...this.#defaults].map(([key, v]) => [key, (specific?.get(key) ?? v).value]));
  }

  /** What sets this optimizer apart beyond its values (its mode), as text; equal for replaceable optimizers. */
  protected abstract variant(): string;

  /** The poptfjs optimizer training `weights` with the values of `valuesOf` (per weight). */
  protected abstract build(weights: TrainedWeights, groups: ReadonlyArray<{ params: tf.Variable[]; values: Map<string, number> }>, defaults: Map<string, number>): Optimizer;

  /**
   * @internal The poptfjs optimizer this one maps to, over `weights` (the
   * trained weights' variables by ONNX name): each weight with specific
   * values in its own parameter group.
   */
  toOptimizer(weights: TrainedWeights): Optimizer {
    const unknown = [...this.#specific.keys()].filter((id) => !weights.has(id));
    if (unknown.length > 0) {
      throw new PopartException(
        `${this.where}: specific values for ${unknown.map((id) => `'${id}'`).join(', ')}, which the session does not train; the trained weights are ${[...weights.keys()].map((id) => `'${id}'`).join(', ')}`,
      );
    }
    const groups = [...this.#specific.keys()].map((id) => ({ params: [weights.get(id)!], values: this.valuesOf(id) }));
    return this.build(weights, groups, this.valuesOf(undefined));
  }

  /**
   * Why `other` cannot replace this optimizer in a running session (PopART's
   * `validReplacement`), or undefined if it can: it must be of the same kind
   * and mode, with specific values for the same weights, and keep every
   * constant value (and its constness).
   */
  replacementProblem(other: PopartOptimizer): string | undefined {
    if (other.type !== this.type || other.variant() !== this.variant()) {
      return `the session trains with a ${this.type} (${this.variant()}); it cannot change to a ${other.type} (${other.variant()})`;
    }
    const mine = [...this.#specific.keys()].sort().join(', ');
    const theirs = [...other.#specific.keys()].sort().join(', ');
    if (mine !== theirs) return `the session's optimizer has specific values for [${mine}], the new one for [${theirs}]; they must be the same weights`;
    const compare = (what: string, a: OptimizerValue, b: OptimizerValue) => {
      if (a.isConst !== b.isConst || (a.isConst && a.value !== b.value)) {
        return `${what} is ${describe(a)} in the session's optimizer and ${describe(b)} in the new one; only values that are not constant can change (create the session with [value, false] to change it later)`;
      }
      return undefined;
    };
    for (const [key, value] of this.#defaults) {
      const problem = compare(key, value, other.#defaults.get(key)!);
      if (problem) return problem;
    }
    for (const [id, values] of this.#specific) {
      for (const [key, value] of values) {
        const problem = compare(`${key} of '${id}'`, value, other.#specific.get(id)!.get(key)!);
        if (problem) return problem;
      }
    }
    return undefined;
  }
}
