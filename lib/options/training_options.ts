/**
 * `opts.Training`: the options of training models (PopTorch's `_TrainingOptions`).
 */
import { checkArgument, enumRule, flag, positiveInteger } from '../option_vocabulary/argument_rules.js';
import { MeanReductionStrategy, ReductionType } from '../option_vocabulary/enums.js';
import type { MutationGuard } from '../option_vocabulary/frozen_options.js';

/** The training options as plain data. */
export interface TrainingSettings {
  /** Micro-batches whose gradients are accumulated before each weight update (default 1). */
  readonly gradientAccumulation: number;
  /** How gradients are reduced across accumulation steps and replicas (default `Mean`). */
  readonly reductionType: ReductionType;
  /** When a mean reduction divides (default `Post`). */
  readonly meanReductionStrategy: MeanReductionStrategy;
  /** Whether the loss scaling factor is adjusted automatically (default false). */
  readonly automaticLossScaling: boolean;
}

/** PopTorch's defaults for {@link TrainingSettings}. */
const DEFAULT_TRAINING_SETTINGS: TrainingSettings = Object.freeze({
  gradientAccumulation: 1,
  reductionType: ReductionType.Mean,
  meanReductionStrategy: MeanReductionStrategy.Post,
  automaticLossScaling: false,
});

const reductionRule = enumRule({ Sum: ReductionType.Sum, Mean: ReductionType.Mean }, 'ReductionType');
const meanStrategyRule = enumRule(MeanReductionStrategy, 'MeanReductionStrategy');

/** Options specific to training; reach them as `opts.Training`. Every setter returns the group. */
export class TrainingOptions {
  #values: TrainingSettings = DEFAULT_TRAINING_SETTINGS;
  readonly #guard: MutationGuard;

  /** @internal `Options` builds its groups; `guard` throws when the options are frozen. */
  constructor(guard: MutationGuard) {
    this.#guard = guard;
  }

  /**
   * Accumulates the gradients of `gradientAccumulation` micro-batches before
   * each weight update, so each update sees `gradientAccumulation` times the
   * micro-batch. Pipelined training needs at least as many micro-batches as
   * pipeline stages (forward and backward) to fill the pipeline.
   */
  gradientAccumulation(gradientAccumulation: number): this {
    const where = this.#check('gradientAccumulation');
    return this.#set({ gradientAccumulation: checkArgument(positiveInteger, gradientAccumulation, where) });
  }

  /**
   * How the gradients of the accumulated micro-batches and of the replicas are
   * reduced: `ReductionType.Mean` (default) or `ReductionType.Sum`.
   */
  accumulationAndReplicationReductionType(reductionType: ReductionType): this {
    const where = this.#check('accumulationAndReplicationReductionType');
    return this.#set({ reductionType: checkArgument(reductionRule, reductionType, where) });
  }

  /**
   * When a mean reduction divides: `Post` (default; sum, then divide once) or
   * `Running` (keep a running mean, which bounds the accumulator's magnitude).
   * Both give the same result within float tolerance, but a float16 gradient
   * accumulator (`accumType: 'float16'`) holding loss-scaled gradients can
   * overflow with `Post` where `Running` does not; so, as in PopTorch, a
   * training model whose optimizer accumulates in float16 uses `Running`
   * whatever is set here (`executor.executable.reduction` tells).
   */
  setMeanAccumulationAndReplicationReductionStrategy(meanReductionStrategy: MeanReductionStrategy): this {
    const where = this.#check('setMeanAccumulationAndReplicationReductionStrategy');
    return this.#set({ meanReductionStrategy: checkArgument(meanStrategyRule, meanReductionStrategy, where) });
  }

  /**
   * Adjusts the loss scaling factor during training from statistics of the
   * gradients (default false), starting from the optimizer's `lossScaling`:
   * an update whose gradients overflowed is skipped and the scale halves; the
   * scale also halves when gradients come within 1/16 of their format's
   * largest value, and doubles otherwise (PopART's rule). Read the current
   * scale with `executor.currentLossScale()`.
   */
  setAutomaticLossScaling(enabled: boolean): this {
    const where = this.#check('setAutomaticLossScaling');
    return this.#set({ automaticLossScaling: checkArgument(flag, enabled, where) });
  }

  /** A copy of the current values. */
  get settings(): TrainingSettings {
    return { ...this.#values };
  }

  /** @internal Replaces every value; `Options` uses it to copy options. */
  restore(values: TrainingSettings): void {
    this.#values = { ...values };
  }

  #check(method: string): string {
    const where = `Options.Training.${method}`;
    this.#guard(where);
    return where;
  }

  #set(change: Partial<TrainingSettings>): this {
    this.#values = { ...this.#values, ...change };
    return this;
  }
}
