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
      if (checked.id === 'EveryN' && this.#batchesPerStep % checked.period !== 0) {
        throw new PopartException(`DataFlow: anchor '${name}' is returned every ${checked.period} batches, which does not divide batchesPerStep (${this.#batchesPerStep})`);
      }
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
