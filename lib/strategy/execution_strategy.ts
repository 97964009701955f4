/**
 * PopTorch's execution strategies as plain data: `Stage`, `Phase`,
 * `PipelinedExecution`, `ShardedExecution`, `SerialPhasedExecution` and
 * `ParallelPhasedExecution`.
 *
 * They record which blocks form which stage, on which IPU, in which phase, so
 * that `Options` can hold, print and serialize them. Each can be called as a
 * factory (`Stage("A").ipu(0)`, as in PopTorch) or constructed with `new`.
 * Arguments are checked where they are given; the placement rules (IPU counts,
 * stage order, ...) are checked later, when a model is partitioned.
 */
import { z } from 'zod';
import { AutoStage, Liveness } from '../option_vocabulary/enums.js';
import { type ArgumentRule, checkArgument, describeValue, enumRule, flag, nonNegativeInteger } from '../option_vocabulary/argument_rules.js';
import { MAX_CALL_ARGUMENTS } from '../option_vocabulary/config_limits.js';
import { frozenStrategyError } from '../option_vocabulary/frozen_options.js';
import { OptionsDataError, optionsDataErrorFromZod } from '../option_vocabulary/options_data_error.js';

/** A stage as plain data: its blocks and, when assigned, its IPU. */
export interface StageData {
  /** The `user_id`s of the blocks this stage is made of. */
  readonly blocks: readonly string[];
  /** The IPU the stage runs on; absent when not assigned. */
  readonly ipu?: number;
}

/** A phase as plain data: the stages that run in parallel in it. */
export interface PhaseData {
  /** The stages of the phase, one per IPU of the phase's IPU group. */
  readonly stages: readonly StageData[];
}

/** `PipelinedExecution` or `ShardedExecution` as plain data. */
export interface StagedExecutionData {
  /** Which strategy. */
  readonly type: 'PipelinedExecution' | 'ShardedExecution';
  /** How stage ids are derived from blocks when `stages` is empty. */
  readonly autoStage: AutoStage;
  /** The explicit stages, in order; empty when the stages come from `autoStage`. */
  readonly stages: readonly StageData[];
}

/** `SerialPhasedExecution` or `ParallelPhasedExecution` as plain data. */
export interface PhasedExecutionData {
  /** Which strategy. */
  readonly type: 'SerialPhasedExecution' | 'ParallelPhasedExecution';
  /** The forward phases, in order. */
  readonly phases: readonly PhaseData[];
  /** Whether the backward pass gets phases of its own instead of sharing the last forward phase. */
  readonly separateBackwardPhase: boolean;
  /** Where tensors live between phases. */
  readonly tensorsLiveness: Liveness;
}

/** Any execution strategy as plain data, as produced by `toJSON()`. */
export type ExecutionStrategyData = StagedExecutionData | PhasedExecutionData;

/** A function that builds a `T` whether it is called or used with `new`, and that `instanceof` recognises. */
export interface CallableConstructor<A extends unknown[], T> {
  /** Builds a `T` (factory style, as in PopTorch). */
  (...args: A): T;
  /** Builds a `T`. */
  new (...args: A): T;
  /** The prototype of the built objects, so that `x instanceof Factory` works. */
  readonly prototype: T;
}

function callableConstructor<A extends unknown[], T extends object>(
  name: string,
  cls: new (...args: A) => T,
): CallableConstructor<A, T> {
  const factory = function (...args: A): T {
    return new cls(...args);
  };
  Object.defineProperty(factory, 'name', { value: name });
  factory.prototype = cls.prototype;
  return factory as unknown as CallableConstructor<A, T>;
}

function quoted(blocks: readonly string[]): string {
  return blocks.map((block) => JSON.stringify(block)).join(', ');
}

const livenessRule = enumRule(Liveness, 'Liveness');
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

/** One argument of `PipelinedExecution` / `ShardedExecution`: a stage, a block id, or the block ids of one stage. */
export type StagedExecutionArgument = StageSpec | string | readonly string[];

function isAutoStage(value: unknown): value is AutoStage {
  return (Object.values(AutoStage) as unknown[]).includes(value);
}

function checkDistinctBlocks(strategy: string, stages: readonly StageSpec[]): void {
  const seen = new Set<string>();
  for (const stage of stages) {
    for (const block of stage.blocks) {
      if (seen.has(block)) throw new RangeError(`${strategy}: block ${JSON.stringify(block)} is in more than one stage`);
      seen.add(block);
    }
  }
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
        throw new TypeError(
          `${type}: argument ${index} must be a Stage, a block id or an array of block ids, got ${describeValue(arg)}`,
        );
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
 * One phase given to a phased strategy: a `Phase`, or what `Phase` accepts
 * as a single argument or an array (`[Stage("A").ipu(0), Stage("B").ipu(2)]`).
 */
export type PhaseArgument = PhaseSpec | StageSpec | string | readonly (StageSpec | string)[];

/** What `SerialPhasedExecution` and `ParallelPhasedExecution` share: phases, backward phases, liveness. */
export abstract class PhasedExecutionSpec {
  /** Which strategy this is. */
  readonly type: PhasedExecutionData['type'];
  /** The forward phases, in order. */
  readonly phases: readonly PhaseSpec[];
  #separateBackwardPhase = false;
  #tensorsLiveness: Liveness = Liveness.AlwaysLive;
  #frozen = false;

  /**
   * @param type - the strategy's name.
   * @param phases - at least one phase (there is no automatic staging for
   *   phased execution); each a `Phase`, a `Stage`, a block id, or an array of
   *   `Stage`s or block ids that `Phase` accepts.
   */
  protected constructor(type: PhasedExecutionData['type'], phases: readonly PhaseArgument[]) {
    this.type = type;
    if (phases.length === 0) {
      throw new RangeError(`${type}: expected at least one phase (phased execution has no automatic staging), got none`);
    }
    this.phases = Object.freeze(
      phases.map((arg: unknown, index) => {
        if (arg instanceof PhaseSpec) return arg;
        if (arg instanceof StageSpec || typeof arg === 'string') return new PhaseSpec(arg);
        if (Array.isArray(arg)) return new PhaseSpec(...(arg as (StageSpec | string)[]));
        throw new TypeError(`${type}: phase ${index} must be a Phase or an array of Stages, got ${describeValue(arg)}`);
      }),
    );
    checkDistinctBlocks(type, this.phases.flatMap((phase) => phase.stages));
  }

  /** Whether the backward pass gets phases of its own (see {@link PhasedExecutionSpec.useSeparateBackwardPhase}). */
  get separateBackwardPhase(): boolean {
    return this.#separateBackwardPhase;
  }

  /** Where tensors live between phases. */
  get tensorsLiveness(): Liveness {
    return this.#tensorsLiveness;
  }

  /** The phase at `index` (0-based), e.g. to assign its IPUs: `strategy.phase(0).ipus(0, 1)`. */
  phase(index: number): PhaseSpec {
    const where = `${this.type}.phase`;
    const checked = checkArgument(nonNegativeInteger, index, where);
    const phase = this.phases[checked];
    if (phase === undefined) {
      throw new RangeError(`${where}: the strategy has ${this.phases.length} phases, there is no phase ${checked}`);
    }
    return phase;
  }

  /**
   * With `use` true, no phase is shared by the forward and backward passes: forward
   * phases 0, 1, 2 are followed by backward phases 4, 5, 6 instead of 2, 3, 4.
   * Returns the strategy.
   */
  useSeparateBackwardPhase(use = true): this {
    const where = `${this.type}.useSeparateBackwardPhase`;
    if (this.#frozen) throw frozenStrategyError(where);
    this.#separateBackwardPhase = checkArgument(flag, use, where);
    return this;
  }

  /** Sends tensors to streaming memory after the forward pass (`Liveness.OffChipAfterFwd`), or keeps them live. Returns the strategy. */
  sendTensorsOffChipAfterFwd(offChip = true): this {
    const where = `${this.type}.sendTensorsOffChipAfterFwd`;
    if (this.#frozen) throw frozenStrategyError(where);
    this.#tensorsLiveness = checkArgument(flag, offChip, where) ? Liveness.OffChipAfterFwd : Liveness.AlwaysLive;
    return this;
  }

  /** Sets where tensors live between phases. Returns the strategy. */
  setTensorsLiveness(liveness: Liveness): this {
    const where = `${this.type}.setTensorsLiveness`;
    if (this.#frozen) throw frozenStrategyError(where);
    this.#tensorsLiveness = checkArgument(livenessRule, liveness, where);
    return this;
  }

  /** Makes this strategy, its phases and their stages read-only; `Options.freeze()` calls it. */
  freeze(): void {
    this.#frozen = true;
    for (const phase of this.phases) phase.freeze();
  }

  /** True once {@link PhasedExecutionSpec.freeze} has been called. */
  isFrozen(): boolean {
    return this.#frozen;
  }

  /** The strategy as plain data. */
  toJSON(): PhasedExecutionData {
    return {
      type: this.type,
      phases: this.phases.map((phase) => phase.toJSON()),
      separateBackwardPhase: this.#separateBackwardPhase,
      tensorsLiveness: this.#tensorsLiveness,
    };
  }

  /** The strategy as a config-file expression, with its settings as method calls. */
  toString(): string {
    const separate = this.#separateBackwardPhase ? '.useSeparateBackwardPhase(true)' : '';
    const liveness =
      this.#tensorsLiveness === Liveness.AlwaysLive ? '' : `.setTensorsLiveness(Liveness.${this.#tensorsLiveness})`;
    return `${this.type}(${this.phases.map(String).join(', ')})${separate}${liveness}`;
  }
}

/** Serial phased execution. Build it with {@link SerialPhasedExecution}. */
export class SerialPhasedExecutionSpec extends PhasedExecutionSpec {
  declare readonly type: 'SerialPhasedExecution';

  /** See {@link SerialPhasedExecution}. */
  constructor(...phases: PhaseArgument[]) {
    super('SerialPhasedExecution', phases);
  }
}

/** Parallel phased execution. Build it with {@link ParallelPhasedExecution}. */
export class ParallelPhasedExecutionSpec extends PhasedExecutionSpec {
  declare readonly type: 'ParallelPhasedExecution';

  /** See {@link ParallelPhasedExecution}. */
  constructor(...phases: PhaseArgument[]) {
    super('ParallelPhasedExecution', phases);
  }
}

/** Any execution strategy. Switch on `type` to tell them apart. */
export type ExecutionStrategy =
  | PipelinedExecutionSpec
  | ShardedExecutionSpec
  | SerialPhasedExecutionSpec
  | ParallelPhasedExecutionSpec;

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

/** `SerialPhasedExecution(...phases)`: all phases run one after another on a single group of IPUs. */
export const SerialPhasedExecution = callableConstructor('SerialPhasedExecution', SerialPhasedExecutionSpec);
/** A serial phased execution strategy (see {@link SerialPhasedExecutionSpec}). */
export type SerialPhasedExecution = SerialPhasedExecutionSpec;

/**
 * `ParallelPhasedExecution(...phases)`: phases alternate between two groups of
 * IPUs (even phases on even IPUs, odd phases on odd IPUs).
 */
export const ParallelPhasedExecution = callableConstructor('ParallelPhasedExecution', ParallelPhasedExecutionSpec);
/** A parallel phased execution strategy (see {@link ParallelPhasedExecutionSpec}). */
export type ParallelPhasedExecution = ParallelPhasedExecutionSpec;

/** True when `value` is one of the four execution strategies. */
export function isExecutionStrategy(value: unknown): value is ExecutionStrategy {
  return value instanceof StagedExecutionSpec || value instanceof PhasedExecutionSpec;
}

// The lists are bounded because their items become the arguments of one constructor call.
const stageDataSchema = z.strictObject({
  blocks: z.array(z.string().min(1)).min(1).max(MAX_CALL_ARGUMENTS),
  ipu: z.number().int().min(0).optional(),
});
const phaseDataSchema = z.strictObject({ stages: z.array(stageDataSchema).min(1).max(MAX_CALL_ARGUMENTS) });
const autoStageSchema = z.enum(Object.values(AutoStage) as [AutoStage, ...AutoStage[]]);
const livenessSchema = z.enum(Object.values(Liveness) as [Liveness, ...Liveness[]]);

function stagedSchema<const T extends StagedExecutionData['type']>(type: T) {
  return z.strictObject({
    type: z.literal(type),
    autoStage: autoStageSchema.default(AutoStage.SameAsIpu),
    stages: z.array(stageDataSchema).max(MAX_CALL_ARGUMENTS).default([]),
  });
}

function phasedSchema<const T extends PhasedExecutionData['type']>(type: T) {
  return z.strictObject({
    type: z.literal(type),
    phases: z.array(phaseDataSchema).min(1).max(MAX_CALL_ARGUMENTS),
    separateBackwardPhase: z.boolean().default(false),
    tensorsLiveness: livenessSchema.default(Liveness.AlwaysLive),
  });
}

const executionStrategyDataSchema = z.discriminatedUnion('type', [
  stagedSchema('PipelinedExecution'),
  stagedSchema('ShardedExecution'),
  phasedSchema('SerialPhasedExecution'),
  phasedSchema('ParallelPhasedExecution'),
]);

function stageFromData(data: z.infer<typeof stageDataSchema>): StageSpec {
  const stage = new StageSpec(...data.blocks);
  return data.ipu === undefined ? stage : stage.ipu(data.ipu);
}

/**
 * Rebuilds a strategy from the plain data its `toJSON()` produced. Missing
 * `autoStage`, `stages`, `separateBackwardPhase` and `tensorsLiveness` take
 * their defaults; anything else that does not fit is an `OptionsDataError`
 * naming the path of the offending key (`stages[0].ipu`).
 */
export function executionStrategyFromJSON(data: unknown): ExecutionStrategy {
  const parsed = executionStrategyDataSchema.safeParse(data);
  if (!parsed.success) throw optionsDataErrorFromZod(parsed.error);
  const value = parsed.data;
  try {
    return strategyFromData(value);
  } catch (error) {
    if (error instanceof OptionsDataError) throw error;
    throw new OptionsDataError([], error instanceof Error ? error.message : String(error), error);
  }
}

function strategyFromData(value: z.infer<typeof executionStrategyDataSchema>): ExecutionStrategy {
  switch (value.type) {
    case 'PipelinedExecution':
    case 'ShardedExecution': {
      if (value.stages.length > 0 && value.autoStage !== AutoStage.SameAsIpu) {
        throw new OptionsDataError(['autoStage'], 'autoStage applies only when no stages are given');
      }
      const args = value.stages.length > 0 ? value.stages.map(stageFromData) : [value.autoStage];
      return value.type === 'PipelinedExecution' ? new PipelinedExecutionSpec(...args) : new ShardedExecutionSpec(...args);
    }
    case 'SerialPhasedExecution':
    case 'ParallelPhasedExecution': {
      const phases = value.phases.map((phase) => new PhaseSpec(...phase.stages.map(stageFromData)));
      const strategy =
        value.type === 'SerialPhasedExecution'
          ? new SerialPhasedExecutionSpec(...phases)
          : new ParallelPhasedExecutionSpec(...phases);
      return strategy.useSeparateBackwardPhase(value.separateBackwardPhase).setTensorsLiveness(value.tensorsLiveness);
    }
  }
}
