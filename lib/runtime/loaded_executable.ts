/**
 * An executable loaded on the simulated device: the device copies of the
 * weights, the optimizer state, the random generator, and the loop that runs
 * one call (device iterations × gradient accumulation × replicas) on it.
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../errors.js';
import { paramValues, rootValues } from '../ir/graph.js';
import type { Optimizer, OptimizerState } from '../../optim/optimizer.js';
import { microBatchesPerCall, microBatchIndex } from './batch_plan.js';
import type { Executable } from './executable.js';
import { GraphInterpreter } from './graph_interpreter.js';
import { OutputCollector } from './output_collector.js';
import { RandomSource } from './random_source.js';

/** What one call returns: the outputs (per output mode) and, for training, the loss. */
export interface CallResult {
  outputs: tf.Tensor[];
  loss?: tf.Tensor;
}

/** An executable with its device state. */
export class LoadedExecutable {
  private readonly interpreter: GraphInterpreter;
  private readonly weights = new Map<string, tf.Tensor>();
  private optimizerState: OptimizerState | undefined;
  /** The random generator of the random pseudo-kernels. */
  readonly random: RandomSource;
  /** The loss scale the gradients are computed with. */
  lossScale = 1;
  /** How many times each returned value is used (outputs, loss, gradients, assignments). */
  private readonly uses = new Map<number, number>();

  constructor(readonly executable: Executable, private optimizer: Optimizer | undefined, seed?: number) {
    this.interpreter = new GraphInterpreter(executable.graph);
    for (const id of rootValues(executable.graph)) this.uses.set(id, (this.uses.get(id) ?? 0) + 1);
    this.random = new RandomSource(seed);
  }

  /** Names of the graph's parameters. */
  get parameterNames(): string[] {
    return [...paramValues(this.executable.graph).keys()];
  }

  /** Uploads the host values of the parameters (copy-on-write: no data is copied until one side changes). */
  loadWeights(variables: ReadonlyMap<string, tf.Variable>): void {
    for (const name of this.parameterNames) {
      const v = variables.get(name);
      if (!v) throw new PoptfjsError(`no host variable for parameter '${name}'`, { type: 'runtime' });
      if (v.isDisposed) throw new PoptfjsError(`the host variable '${name}' was disposed`, { type: 'runtime' });
      this.weights.get(name)?.dispose();
      this.weights.set(name, tf.keep(tf.clone(v)));
    }
  }

  /** Writes the device values of the parameters into the host variables. */
  storeWeights(variables: ReadonlyMap<string, tf.Variable>): void {
    for (const [name, w] of this.weights) variables.get(name)?.assign(w);
  }

  /** The device value of a parameter (owned by the device; clone to keep it). */
  weight(name: string): tf.Tensor | undefined {
    return this.weights.get(name);
  }

  /** Replaces the optimizer; its state starts fresh if its type changed. */
  setOptimizer(optimizer: Optimizer): void {
    if (this.optimizer && this.optimizer.type !== optimizer.type) this.resetOptimizerState();
    this.optimizer = optimizer;
  }

  private resetOptimizerState(): void {
    if (!this.optimizerState) return;
    for (const slots of this.optimizerState.slots.values()) tf.dispose(Object.values(slots));
    this.optimizerState = undefined;
  }

  /** Runs one call on host inputs that have already been checked against the signature. */
  run(hostInputs: readonly tf.Tensor[]): CallResult {
    const { executable } = this;
    const f = executable.factors;
    const training = executable.kind === 'training';
    const split = microBatchesPerCall(f) > 1;
    const micro = executable.microBatchSize;
    const collector = new OutputCollector(executable.outputMode, executable.outputReturnPeriod, f, executable.outputCount + (training ? 1 : 0));
    const roles = executable.graph.roles;
    const lossScale = training ? tf.scalar(this.lossScale) : undefined;
    const accumulated = new Map<string, tf.Tensor>();
    let accumulatedCount = 0;
    try {
      for (let d = 0; d < f.deviceIterations; d++) {
        for (let g = 0; g < f.gradientAccumulation; g++) {
          const assigned: Array<Map<string, tf.Tensor>> = [];
          for (let r = 0; r < f.replicationFactor; r++) {
            const index = microBatchIndex(f, d, g, r);
            const inputs = split
              ? hostInputs.map((x) => tf.slice(x, [index * micro], [micro]))
              : [...hostInputs];
            if (lossScale) inputs.push(lossScale);
            let values: StepValues;
            try {
              values = new StepValues(this.interpreter.run({ inputs, params: this.weights, random: this.random }), this.uses);
            } finally {
              if (split) tf.dispose(inputs.slice(0, hostInputs.length));
            }
            const outputs = roles.outputs.map((id) => values.take(id));
            if (roles.loss !== undefined) outputs.push(values.take(roles.loss));
            collector.add(d, g, r, outputs);
            if (roles.gradients) {
              accumulatedCount++;
              for (const [name, id] of Object.entries(roles.gradients)) this.accumulate(accumulated, name, values.take(id), accumulatedCount);
            }
            const writes = new Map<string, tf.Tensor>();
            for (const a of executable.graph.assignments) writes.set(a.param, values.take(a.value));
            assigned.push(writes);
          }
          this.applyAssignments(assigned);
        }
        if (training) {
          this.update(accumulated, accumulatedCount);
          accumulatedCount = 0;
        }
      }
      const combined = collector.finish();
      const loss = training ? combined.pop() : undefined;
      return loss ? { outputs: combined, loss } : { outputs: combined };
    } catch (error) {
      collector.dispose();
      throw error;
    } finally {
      lossScale?.dispose();
      tf.dispose([...accumulated.values()]);
    }
  }

  private accumulate(acc: Map<string, tf.Tensor>, name: string, grad: tf.Tensor, count: number): void {
    const previous = acc.get(name);
    if (!previous) {
      acc.set(name, grad);
      return;
    }
    const { reduction } = this.executable;
    const next =
      reduction.type === 'Mean' && reduction.strategy === 'Running'
        ? tf.tidy(() => tf.add(previous, tf.div(tf.sub(grad, previous), count)))
        : tf.add(previous, grad);
    previous.dispose();
    grad.dispose();
    acc.set(name, next);
  }

  private update(acc: Map<string, tf.Tensor>, count: number): void {
    const { reduction } = this.executable;
    const divisor = (reduction.type === 'Mean' && reduction.strategy === 'Post' ? count : 1) * this.lossScale;
    const grads = new Map<string, tf.Tensor>();
    const trained = new Set(this.optimizer?.parameterNames ?? []);
    for (const [name, g] of acc) {
      if (trained.has(name)) grads.set(name, divisor === 1 ? g : tf.div(g, divisor));
    }
    if (this.optimizer && grads.size > 0) {
      this.optimizerState ??= this.optimizer.initialState(this.weights);
      const updated = this.optimizer.apply(this.weights, grads, this.optimizerState);
      for (const [name, w] of updated) {
        this.weights.get(name)?.dispose();
        this.weights.set(name, w);
      }
    }
    for (const [name, g] of grads) if (g !== acc.get(name)) g.dispose();
    tf.dispose([...acc.values()]);
    acc.clear();
  }

  /** Buffers written by the model keep the first replica's value (replicas share broadcast buffers). */
  private applyAssignments(perReplica: Array<Map<string, tf.Tensor>>): void {
    perReplica.forEach((writes, r) => {
      for (const [name, t] of writes) {
        if (r === 0) {
          this.weights.get(name)?.dispose();
          this.weights.set(name, t);
        } else {
          t.dispose();
        }
      }
    });
  }

  /** Frees the device state. */
  dispose(): void {
    tf.dispose([...this.weights.values()]);
    this.weights.clear();
    this.resetOptimizerState();
    this.interpreter.dispose();
  }
}

/** The tensors of one micro-step, handed out once each (a value wanted twice is cloned). */
class StepValues {
  private readonly remaining: Map<number, number>;

  constructor(private readonly values: Map<number, tf.Tensor>, uses: ReadonlyMap<number, number>) {
    this.remaining = new Map(uses);
  }

  take(id: number): tf.Tensor {
    const t = this.values.get(id);
    const left = this.remaining.get(id) ?? 0;
    if (!t || left === 0) throw new PoptfjsError(`internal error: value %${id} missing from the run`, { type: 'runtime' });
    this.remaining.set(id, left - 1);
    return left > 1 ? tf.clone(t) : t;
  }
}
