/**
 * `AnchorReturnType`: which values of an anchored tensor a run hands back,
 * as PopART's: every batch (`All`), every N-th batch (`EveryN`, N being the
 * return period), the last one (`Final`) or their sum (`Sum`). Build one
 * with `AnchorReturnType('All')` or `AnchorReturnType('EveryN', 2)`; the
 * names are matched without regard to case (`'ALL'`, as in PopART's guide).
 */
import { z } from 'zod';
import { checkedArgument } from './checked_argument.js';

/** The return types (PopART's `AnchorReturnTypeId`, under its names too: `ALL`, `FINAL`, `SUM`, `EVERYN`). */
export const AnchorReturnTypeId = {
  /** The value of every batch (and accumulation step and replica). */
  All: 'All',
  /** The value of the last batch's last accumulation step, per replica. */
  Final: 'Final',
  /** The sum over the batches and accumulation steps, per replica. */
  Sum: 'Sum',
  /** The value of every N-th batch: batches N-1, 2N-1, ... */
  EveryN: 'EveryN',
  /** PopART's name of `All`. */
  ALL: 'All',
  /** PopART's name of `Final`. */
  FINAL: 'Final',
  /** PopART's name of `Sum`. */
  SUM: 'Sum',
  /** PopART's name of `EveryN`. */
  EVERYN: 'EveryN',
} as const;
/** A member of {@link AnchorReturnTypeId}. */
export type AnchorReturnTypeId = (typeof AnchorReturnTypeId)[keyof typeof AnchorReturnTypeId];

const IDS = [...new Set(Object.values(AnchorReturnTypeId))];
const argumentsSchema = z.tuple([z.string(), z.number().int().positive().optional()]).transform(([name, period], context) => {
  const id = IDS.find((candidate) => candidate.toLowerCase() === name.toLowerCase());
  if (!id) {
    context.addIssue({ code: 'custom', message: `'${name}' is not a return type; expected one of ${IDS.join(', ')}`, path: [0] });
    return z.NEVER;
  }
  if (id === 'EveryN' && period === undefined) {
    context.addIssue({ code: 'custom', message: 'EveryN needs a return period (a positive integer)', path: [1] });
    return z.NEVER;
  }
  if (id !== 'EveryN' && period !== undefined) {
    context.addIssue({ code: 'custom', message: `a return period only applies to EveryN, not ${id}`, path: [1] });
    return z.NEVER;
  }
  return { id, period: period ?? 1 };
});

/** A return type and its period. Build it with {@link AnchorReturnType}. */
export class AnchorReturnTypeSpec {
  /** Which values are returned. */
  readonly id: AnchorReturnTypeId;
  /** The return period of `EveryN`; 1 for the others. */
  readonly period: number;

  /** See {@link AnchorReturnType}. */
  constructor(name: string, period?: number) {
    const checked = checkedArgument(argumentsSchema, period === undefined ? [name] : [name, period], 'AnchorReturnType');
    this.id = checked.id;
    this.period = checked.period;
  }

  /** The return period (PopART's `rp()`). */
  rp(): number {
    return this.period;
  }

  /** `AnchorReturnType("EveryN", 2)`, as written. */
  toString(): string {
    return this.id === 'EveryN' ? `AnchorReturnType("EveryN", ${this.period})` : `AnchorReturnType("${this.id}")`;
  }
}

/**
 * `AnchorReturnType(name, period?)`: `'All'`, `'Final'`, `'Sum'`, or
 * `'EveryN'` with its period (any case).
 */
export function AnchorReturnType(name: string, period?: number): AnchorReturnTypeSpec {
  return new AnchorReturnTypeSpec(name, period);
}
/** A return type (see {@link AnchorReturnTypeSpec}). */
export type AnchorReturnType = AnchorReturnTypeSpec;
