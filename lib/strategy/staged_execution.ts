/**
 * PopTorch's `PipelinedExecution` and `ShardedExecution`: stages given
 * explicitly, or derived from the blocks by an `AutoStage` policy.
 *
 * Each can be called as a factory (`PipelinedExecution("A", "B")`, as in
 * PopTorch) or constructed with `new`. Arguments are checked where they are
 * given; the placement rules (IPU counts, stage order, ...) are checked later,
 * when a model is partitioned.
 */
import { AutoStage } from '../option_vocabulary/enums.js';
import { describeValue } from '../option_vocabulary/argument_rules.js';
import { callableConstructor } from './callable_constructor.js';
import type { StagedExecutionData } from './execution_strategy_data.js';
import { checkDistinctBlocks, StageSpec } from './stages_and_phases.js';

/** One argument of `PipelinedExecution` / `ShardedExecution`: a stage, a block id, or the block ids of one stage. */
export type StagedExecutionArgument = StageSpec | string | readonly string[];

function isAutoStage(value: unknown): value is AutoStage {
  return (Object.values(AutoStage) as unknown[]).includes(value);
}

/** What `PipelinedExecution` and `ShardedExecution` share: stages given explicitly, or an `AutoStage` policy. */
export abstract class StagedExecutionSpec {
  /** Which strategy this is. */
  readonly type: StagedExecutionData['type'];
  /** How stage ids are derived from blocks when {@link StagedExecutionSpec.stages} is empty. */
  readonly autoStage: AutoStage;
  /** The explicit stages, in order; empty when the stages come from {@link StagedExecutionSpec.autoStage}. */
  readonly stages: readonly StageSpec[];
  #frozen = false;

  /**
   * @param type - the strategy's name.
   * @param args - a single `AutoStage` member, or the stages: each a `Stage`,
   *   a block id (a stage of one block) or an array of block ids (one stage).
   *   No arguments means `AutoStage.SameAsIpu`. A lone argument equal to an
   *   `AutoStage` member is the policy; write `Stage("SameAsIpu")` for a block
   *   of that name.
   */
  protected constructor(type: StagedExecutionData['type'], args: readonly StagedExecutionArgument[]) {
    this.type = type;
    const [first] = args;
    if (args.length === 1 && isAutoStage(first)) {
      this.autoStage = first;
      this.stages = Object.freeze([]);
      return;
    }
    this.autoStage = AutoStage.SameAsIpu;
    this.stages = Object.freeze(
      args.map((arg: unknown, index) => {
        if (arg instanceof StageSpec) return arg;
        if (typeof arg === 'string') return new StageSpec(arg);
        if (Array.isArray(arg) && arg.every((item) => typeof item === 'string')) return new StageSpec(...(arg as string[]));
        throw new TypeError(`${type}: argument ${index} must be a Stage, a block id or an array of block ids, got ${describeValue(arg)}`);
      }),
    );
    checkDistinctBlocks(type, this.stages);
  }

  /** Makes this strategy and its stages read-only; `Options.freeze()` calls it. */
  freeze(): void {
    this.#frozen = true;
    for (const stage of this.stages) stage.freeze();
  }

  /** True once {@link StagedExecutionSpec.freeze} has been called. */
  isFrozen(): boolean {
    return this.#frozen;
  }

  /** The strategy as plain data. */
  toJSON(): StagedExecutionData {
    return { type: this.type, autoStage: this.autoStage, stages: this.stages.map((stage) => stage.toJSON()) };
  }

  /** The strategy as a config-file expression: `PipelinedExecution(AutoStage.SameAsIpu)`. */
  toString(): string {
    const args = this.stages.length === 0 ? `AutoStage.${this.autoStage}` : this.stages.map(String).join(', ');
    return `${this.type}(${args})`;
  }
}

/** Pipelined execution (the default strategy). Build it with {@link PipelinedExecution}. */
export class PipelinedExecutionSpec extends StagedExecutionSpec {
  declare readonly type: 'PipelinedExecution';

  /** See {@link PipelinedExecution}. */
  constructor(...args: StagedExecutionArgument[]) {
    super('PipelinedExecution', args);
  }
}

/** Sharded execution. Build it with {@link ShardedExecution}. */
export class ShardedExecutionSpec extends StagedExecutionSpec {
  declare readonly type: 'ShardedExecution';

  /** See {@link ShardedExecution}. */
  constructor(...args: StagedExecutionArgument[]) {
    super('ShardedExecution', args);
  }
}

/**
 * `PipelinedExecution(...stages)` or `PipelinedExecution(AutoStage.X)`: the
 * stages run as a pipeline over micro-batches. Without stages, each block is a
 * stage whose id is its IPU (`AutoStage.SameAsIpu`, the default) or the next id
 * (`AutoStage.AutoIncrement`).
 */
export const PipelinedExecution = callableConstructor('PipelinedExecution', PipelinedExecutionSpec);
/** A pipelined execution strategy (see {@link PipelinedExecutionSpec}). */
export type PipelinedExecution = PipelinedExecutionSpec;

/** `ShardedExecution(...stages)`: as {@link PipelinedExecution}, but the stages run one after another. */
export const ShardedExecution = callableConstructor('ShardedExecution', ShardedExecutionSpec);
/** A sharded execution strategy (see {@link ShardedExecutionSpec}). */
export type ShardedExecution = ShardedExecutionSpec;
