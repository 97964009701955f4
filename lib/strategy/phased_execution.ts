/**
 * PopTorch's `SerialPhasedExecution` and `ParallelPhasedExecution`: phases of
 * stages, whether the backward pass has phases of its own, and where tensors
 * live between phases.
 *
 * Each can be called as a factory (`SerialPhasedExecution(Phase("A"))`, as in
 * PopTorch) or constructed with `new`. Arguments are checked where they are
 * given; the placement rules (IPU counts, phase order, ...) are checked later,
 * when a model is partitioned.
 */
import { Liveness } from '../option_vocabulary/enums.js';
import { checkArgument, describeValue, enumRule, flag, nonNegativeInteger } from '../option_vocabulary/argument_rules.js';
import { frozenStrategyError } from '../option_vocabulary/frozen_options.js';
import { callableConstructor } from './callable_constructor.js';
import type { PhasedExecutionData } from './execution_strategy_data.js';
import { checkDistinctBlocks, PhaseSpec, StageSpec } from './stages_and_phases.js';

const livenessRule = enumRule(Liveness, 'Liveness');

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
    checkDistinctBlocks(
      type,
      this.phases.flatMap((phase) => phase.stages),
    );
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
    const liveness = this.#tensorsLiveness === Liveness.AlwaysLive ? '' : `.setTensorsLiveness(Liveness.${this.#tensorsLiveness})`;
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
