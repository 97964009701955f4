/**
 * `DataFlow`: how a session's runs move data, as PopART's: the number of
 * batches each `run` processes (`batchesPerStep`) and the anchors, the
 * tensors handed back to the host with their return types. Any tensor of
 * the graph can be anchored, intermediate values included.
 *
 * ```ts
 * const dataFlow = new DataFlow(100, { output: AnchorReturnType('All') });
 * ```
 */
import { z } from 'zod';
import { PopartException } from '../common/errors.js';
import { AnchorReturnType, AnchorReturnTypeSpec } from './anchor_return_type.js';
import { checkedArgument } from './checked_argument.js';

/** Anchors given to {@link DataFlow}: return types by tensor name, or tensor names sharing one return type. */
export type AnchorsArgument = Readonly<Record<string, AnchorReturnTypeSpec>> | ReadonlyMap<string, AnchorReturnTypeSpec> | readonly string[];

const batchesSchema = z.number().int().positive();
const artSchema = z.instanceof(AnchorReturnTypeSpec, { message: 'expected an AnchorReturnType, e.g. AnchorReturnType("All")' });

/**
 * PopART's rule for an `EveryN` period (willow/src/dataflow.cpp,
 * `isValidAnchorReturnPeriod`, tested by tests/integration/dataflowtest.cpp):
 * at most the batches per step, and a factor of them, so batch N of each step
 * is returned or not the same way in every step; PopART's messages.
 */
function checkReturnPeriod(name: string, period: number, batchesPerStep: number): void {
  const where = `(DataFlow: anchor '${name}' is returned every ${period} batches, and each run processes ${batchesPerStep})`;
  if (period > batchesPerStep) throw new PopartException(`Return period must be <= to the number of batches per step ${where}`);
  if (batchesPerStep % period !== 0) {
    throw new PopartException(
      `Return period must be a factor of the number of batches per step ${where}: otherwise which batches are returned would change from one step to the next`,
    );
  }
}

/** The batches per step and the anchors of a session. */
export class DataFlow {
  readonly #batchesPerStep: number;
  readonly #anchors: ReadonlyMap<string, AnchorReturnTypeSpec>;

  /**
   * @param batchesPerStep batches each `session.run` processes (a positive integer)
   * @param anchors return types by tensor name; or tensor names, all returned as `returnType`
   * @param returnType the return type of anchors given as names (default `All`)
   */
  constructor(batchesPerStep: number, anchors: AnchorsArgument = {}, returnType: AnchorReturnTypeSpec = AnchorReturnType('All')) {
    this.#batchesPerStep = checkedArgument(batchesSchema, batchesPerStep, 'DataFlow: batchesPerStep');
    const entries: Array<[string, unknown]> = Array.isArray(anchors)
      ? (anchors as readonly string[]).map((name) => [name, returnType])
      : anchors instanceof Map
        ? [...anchors]
        : Object.entries(anchors as Record<string, unknown>);
    const map = new Map<string, AnchorReturnTypeSpec>();
    for (const [name, art] of entries) {
      if (typeof name !== 'string' || name === '') throw new PopartException(`DataFlow: anchor names must be non-empty strings, got ${JSON.stringify(name)}`);
      const checked = checkedArgument(artSchema, art, `DataFlow: anchor '${name}'`);
      if (checked.id === 'EveryN') checkReturnPeriod(name, checked.period, this.#batchesPerStep);
      map.set(name, checked);
    }
    this.#anchors = map;
  }

  /** Batches each run processes. */
  batchesPerStep(): number {
    return this.#batchesPerStep;
  }

  /** The anchored tensor names, in the order given. */
  anchors(): string[] {
    return [...this.#anchors.keys()];
  }

  /** Number of anchors. */
  nAnchors(): number {
    return this.#anchors.size;
  }

  /** True if `tensorId` is anchored. */
  isAnchored(tensorId: string): boolean {
    return this.#anchors.has(tensorId);
  }

  /** The return type of the anchor `tensorId`. */
  art(tensorId: string): AnchorReturnTypeSpec {
    const art = this.#anchors.get(tensorId);
    if (!art)
      throw new PopartException(
        `DataFlow: '${tensorId}' is not anchored; the anchors are ${
          this.anchors()
            .map((a) => `'${a}'`)
            .join(', ') || 'none'
        }`,
      );
    return art;
  }
}
