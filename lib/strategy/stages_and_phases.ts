/**
 * PopTorch's `Stage` and `Phase`: which blocks run together on one IPU, and
 * which stages run in parallel in one phase of a phased execution.
 *
 * Each can be called as a factory (`Stage("A").ipu(0)`, as in PopTorch) or
 * constructed with `new`. Arguments are checked where they are given.
 */
import { type ArgumentRule, checkArgument, describeValue, nonNegativeInteger } from '../option_vocabulary/argument_rules.js';
import { frozenStrategyError } from '../option_vocabulary/frozen_options.js';
import { callableConstructor } from './callable_constructor.js';
import type { PhaseData, StageData } from './execution_strategy_data.js';

function quoted(blocks: readonly string[]): string {
  return blocks.map((block) => JSON.stringify(block)).join(', ');
}

const ipuRule: ArgumentRule<number> = { ...nonNegativeInteger, expected: 'a non-negative integer (an IPU id)' };

/** A stage: one or more blocks that run together on one IPU. Build it with {@link Stage}. */
export class StageSpec {
  /** The `user_id`s of the blocks this stage is made of. */
  readonly blocks: readonly string[];
  #ipu: number | undefined;
  #frozen = false;

  /** A stage made of the blocks named `blockIds` (at least one, each a non-empty string). */
  constructor(...blockIds: string[]) {
    if (blockIds.length === 0) {
      throw new RangeError('Stage: expected at least one block id (the user_id of a Block or BeginBlock), got none');
    }
    blockIds.forEach((blockId: unknown, index) => {
      if (typeof blockId !== 'string' || blockId === '') {
        const message = `Stage: block ids must be non-empty strings; argument ${index} is ${describeValue(blockId)}`;
        throw typeof blockId === 'string' ? new RangeError(message) : new TypeError(message);
      }
    });
    this.blocks = Object.freeze([...blockIds]);
  }

  /** The IPU this stage runs on, or `undefined` when not assigned. */
  get ipuId(): number | undefined {
    return this.#ipu;
  }

  /** Places this stage on IPU `ipu` (a non-negative integer); returns the stage. */
  ipu(ipu: number): this {
    const where = `${this.#label()}.ipu`;
    if (this.#frozen) throw frozenStrategyError(where);
    this.#ipu = checkArgument(ipuRule, ipu, where);
    return this;
  }

  /** Makes this stage read-only; its owner's `freeze()` calls it. */
  freeze(): void {
    this.#frozen = true;
  }

  /** True once {@link StageSpec.freeze} has been called. */
  isFrozen(): boolean {
    return this.#frozen;
  }

  /** The stage as plain data. */
  toJSON(): StageData {
    return this.#ipu === undefined ? { blocks: [...this.blocks] } : { blocks: [...this.blocks], ipu: this.#ipu };
  }

  /** The stage as a config-file expression: `Stage("A", "B").ipu(0)`. */
  toString(): string {
    return this.#ipu === undefined ? this.#label() : `${this.#label()}.ipu(${this.#ipu})`;
  }

  #label(): string {
    return `Stage(${quoted(this.blocks)})`;
  }
}

/** A phase: stages that run in parallel, one per IPU of an IPU group. Build it with {@link Phase}. */
export class PhaseSpec {
  /** The stages of this phase. */
  readonly stages: readonly StageSpec[];
  #frozen = false;

  /**
   * A phase made of the given stages, or, when given block ids, of one stage
   * made of those blocks (`Phase("A", "B")` is `Phase(Stage("A", "B"))`).
   */
  constructor(...stagesOrBlockIds: (StageSpec | string)[]) {
    if (stagesOrBlockIds.length === 0) {
      throw new RangeError('Phase: expected one or more Stages or block ids, got none');
    }
    if (stagesOrBlockIds.every((item) => item instanceof StageSpec)) {
      this.stages = Object.freeze([...stagesOrBlockIds]);
    } else if (stagesOrBlockIds.every((item) => typeof item === 'string')) {
      this.stages = Object.freeze([new StageSpec(...stagesOrBlockIds)]);
    } else {
      const kinds = stagesOrBlockIds.map((item) => describeValue(item)).join(', ');
      throw new TypeError(`Phase: arguments must be either all Stages or all block ids (strings), got ${kinds}`);
    }
  }

  /** The stage at `index`. */
  stage(index: number): StageSpec {
    const where = `${this.#label()}.stage`;
    const checked = checkArgument(nonNegativeInteger, index, where);
    const stage = this.stages[checked];
    if (stage === undefined) {
      throw new RangeError(`${where}: the phase has ${this.stages.length} stages, there is no stage ${checked}`);
    }
    return stage;
  }

  /** Assigns one IPU to each stage of this phase, in order; as many IPUs as stages. Returns the phase. */
  ipus(...ipus: number[]): this {
    const where = `${this.#label()}.ipus`;
    if (this.#frozen) throw frozenStrategyError(where);
    if (ipus.length !== this.stages.length) {
      throw new RangeError(`${where}: the phase has ${this.stages.length} stages but ${ipus.length} IPUs were given`);
    }
    const checked = ipus.map((ipu, index) => checkArgument(ipuRule, ipu, `${where}: IPU ${index}`));
    this.stages.forEach((stage, index) => stage.ipu(checked[index] as number));
    return this;
  }

  /** Makes this phase and its stages read-only. */
  freeze(): void {
    this.#frozen = true;
    for (const stage of this.stages) stage.freeze();
  }

  /** True once {@link PhaseSpec.freeze} has been called. */
  isFrozen(): boolean {
    return this.#frozen;
  }

  /** The phase as plain data. */
  toJSON(): PhaseData {
    return { stages: this.stages.map((stage) => stage.toJSON()) };
  }

  /** The phase as a config-file expression: `Phase(Stage("A").ipu(0), Stage("B").ipu(1))`. */
  toString(): string {
    return `Phase(${this.stages.map((stage) => stage.toString()).join(', ')})`;
  }

  #label(): string {
    return `Phase(${this.stages.map((stage) => `Stage(${quoted(stage.blocks)})`).join(', ')})`;
  }
}

/**
 * `Stage(...blockIds)`: the blocks named `blockIds` (their `user_id`s) run
 * together on one IPU; chain `.ipu(n)` to choose the IPU.
 */
export const Stage = callableConstructor('Stage', StageSpec);
/** A stage (see {@link StageSpec}). */
export type Stage = StageSpec;

/**
 * `Phase(...stages)`: stages that run in parallel in one phase of a phased
 * execution; `Phase("A", "B")` is one stage made of blocks A and B. Chain
 * `.ipus(...)` to place the stages.
 */
export const Phase = callableConstructor('Phase', PhaseSpec);
/** A phase (see {@link PhaseSpec}). */
export type Phase = PhaseSpec;

/** Throws a `RangeError` naming `strategy` when a block is in more than one of `stages`. */
export function checkDistinctBlocks(strategy: string, stages: readonly StageSpec[]): void {
  const seen = new Set<string>();
  for (const stage of stages) {
    for (const block of stage.blocks) {
      if (seen.has(block)) throw new RangeError(`${strategy}: block ${JSON.stringify(block)} is in more than one stage`);
      seen.add(block);
    }
  }
}
