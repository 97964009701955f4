/**
 * The update at the end of each device iteration of a training call: the
 * gradients of each micro-batch summed (or averaged as they come) per
 * parameter and replica group, in float16 where the optimizer accumulates
 * so; in a multi-instance run summed over the instances; under automatic
 * loss scaling, the loss scale moved (and the update skipped when the
 * gradients overflowed); then reduced (the mean's divisor, the loss scale)
 * and applied by the optimizer, one optimizer state for the parameters not
 * split across replica groups and one per group of each split parameter.
 */
import * as tf from '@tensorflow/tfjs';
import type { Optimizer, OptimizerSettings } from '../../optim/optimizer.js';
import { combineStatistics, gradientStatistics, nextLossScale, type GradientStatistics } from '../../optim/automatic_loss_scaling.js';
import { ScalarConstants } from '../../optim/scalar_constants.js';
import type { Float16Rounding } from '../precision/float16_rounding.js';
import type { Executable } from '../executable/executable.js';
import type { DeviceOptimizerStates } from './device_optimizer_states.js';
import { meanDivisor } from './gradient_mean.js';
import type { InstanceGradients } from './instance_gradients.js';
import type { ReplicaWeights } from './replica_weights.js';

/** Summed (or running-mean) gradients of one parameter for each of its replica groups. */
export interface GroupGradients {
  sums: Array<tf.Tensor | undefined>;
  counts: number[];
}

/** The optimizer an update applies and the values it applies it with (those of its last `setOptimizer`). */
export interface OptimizerInUse {
  readonly optimizer: Optimizer;
  readonly settings: OptimizerSettings;
}

/** The gradient accumulation and weight update of a loaded executable. */
export class GradientUpdate {
  /** The scalars the optimizer's formulas multiply and divide by, kept while their values stay the same. */
  private readonly scalars = new ScalarConstants();

  constructor(
    private readonly executable: Executable,
    private readonly weights: ReplicaWeights,
    private readonly states: DeviceOptimizerStates,
    private readonly rounding: Float16Rounding,
    /** The parameters held in float16. */
    private readonly halfParams: ReadonlySet<string>,
    /** The other instances of a multi-instance run, if this is one. */
    private readonly instanceGradients: InstanceGradients | undefined,
  ) {}

  /** Adds `grad`, the gradient of `name` on `replica` for one micro-batch, to the sum of its replica group (the tensor is owned from now on). */
  accumulate(gradients: Map<string, GroupGradients>, name: string, replica: number, grad: tf.Tensor, use: OptimizerInUse | undefined): void {
    let entry = gradients.get(name);
    if (!entry) {
      const groups = this.weights.groups(name).length;
      entry = { sums: new Array(groups).fill(undefined), counts: new Array(groups).fill(0) };
      gradients.set(name, entry);
    }
    const k = this.weights.groupIndex(name)[replica]!;
    const previous = entry.sums[k];
    const count = ++entry.counts[k]!;
    const half = this.halfAccumulator(name, use);
    if (!previous) {
      entry.sums[k] = half ? this.rounding.replace(grad) : grad;
      return;
    }
    const { reduction } = this.executable;
    const sum =
      reduction.type === 'Mean' && reduction.strategy === 'Running' ? tf.tidy(() => tf.add(previous, tf.div(tf.sub(grad, previous), count))) : tf.add(previous, grad);
    entry.sums[k] = half ? this.rounding.replace(sum) : sum;
    previous.dispose();
    grad.dispose();
  }

  /** True if the gradients of `name` are accumulated in float16 (the optimizer's `accumType`, or a float16 parameter's own precision). */
  private halfAccumulator(name: string, use: OptimizerInUse | undefined): boolean {
    if (!use) return false;
    const precision = use.optimizer.accumulatorPrecision(use.settings);
    return precision === 'float16' || (precision === 'parameter' && this.halfParams.has(name));
  }

  /** Under automatic loss scaling: moves the loss scale after the statistics of this step's accumulated gradients; true if the update is skipped. */
  private adjustLossScale(gradients: Map<string, GroupGradients>, trained: ReadonlySet<string>, use: OptimizerInUse, lossScale: number): { scale: number; skip: boolean } {
    if (!this.executable.numerics?.automaticLossScaling) return { scale: lossScale, skip: false };
    const statistics: GradientStatistics[] = [];
    for (const [name, entry] of gradients) {
      if (!trained.has(name)) continue;
      const half = this.halfAccumulator(name, use) || this.halfParams.has(name);
      for (const sum of entry.sums) if (sum) statistics.push(gradientStatistics(sum.dataSync() as Float32Array, half));
    }
    return nextLossScale(lossScale, combineStatistics(statistics));
  }

  /**
   * Reduces the gradients of a device iteration (computed with the loss
   * scale `lossScale`) and applies the optimizer `use`, per replica group;
   * returns the loss scale of the next iteration (moved under automatic loss
   * scaling). `gradients` is emptied.
   */
  apply(gradients: Map<string, GroupGradients>, use: OptimizerInUse, lossScale: number): number {
    const { reduction } = this.executable;
    const trained = new Set(use.optimizer.parameterNames);
    this.sumAcrossInstances(gradients, use);
    const next = this.adjustLossScale(gradients, trained, use, lossScale);
    if (next.skip) {
      for (const entry of gradients.values()) tf.dispose(entry.sums.filter((t): t is tf.Tensor => t !== undefined));
      gradients.clear();
      return next.scale;
    }
    const replicas = this.executable.factors.replicationFactor;
    const instances = this.instanceGradients?.instances ?? 1;
    const reduce = (sum: tf.Tensor, count: number, members: number) => {
      const divisor = meanDivisor(reduction, count, members, replicas, instances) * lossScale;
      return divisor === 1 ? sum : tf.div(sum, divisor);
    };
    // Ungrouped parameters share one optimizer state; each group of a grouped parameter has its own.
    const batches = new Map<string, { weights: Map<string, tf.Tensor>; grads: Map<string, tf.Tensor>; members: Map<string, number[]> }>();
    for (const [name, entry] of gradients) {
      if (!trained.has(name)) continue;
      const groups = this.weights.groups(name);
      const grouped = name in this.executable.replicaGroupings;
      entry.sums.forEach((sum, k) => {
        if (!sum) return;
        const key = grouped ? `${name}#${k}` : '';
        let batch = batches.get(key);
        if (!batch) batches.set(key, (batch = { weights: new Map(), grads: new Map(), members: new Map() }));
        batch.weights.set(name, this.weights.of(groups[k]![0]!).get(name)!);
        batch.grads.set(name, reduce(sum, entry.counts[k]!, groups[k]!.length));
        batch.members.set(name, groups[k]!);
      });
    }
    for (const [key, batch] of batches) {
      const state = this.states.of(key);
      const updated = use.optimizer.apply(
        { weights: batch.weights, grads: batch.grads, state, half: this.halfParams, rounding: this.rounding, scalars: this.scalars },
        use.settings,
      );
      for (const [name, w] of updated) this.weights.setGroup(name, batch.members.get(name)!, w);
      for (const [name, g] of batch.grads) if (!gradients.get(name)!.sums.includes(g)) g.dispose();
    }
    for (const entry of gradients.values()) tf.dispose(entry.sums.filter((t): t is tf.Tensor => t !== undefined));
    gradients.clear();
    this.scalars.endStep();
    return next.scale;
  }

  /**
   * In a multi-instance run, replaces each (ungrouped) gradient sum by its
   * sum over every instance, in name order (the same on every instance);
   * float16 accumulators are rounded again.
   */
  private sumAcrossInstances(gradients: Map<string, GroupGradients>, use: OptimizerInUse): void {
    if (!this.instanceGradients) return;
    const names = [...gradients.keys()].sort();
    const summed = this.instanceGradients.sumAcrossInstances(names.map((name) => gradients.get(name)!.sums[0]!));
    names.forEach((name, i) => {
      const entry = gradients.get(name)!;
      entry.sums[0]!.dispose();
      entry.sums[0] = this.halfAccumulator(name, use) ? this.rounding.replace(summed[i]!) : summed[i]!;
    });
  }

  /** Frees the scalars kept. */
  dispose(): void {
    this.scalars.dispose();
  }
}
