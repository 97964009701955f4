/**
 * An executable loaded on the simulated device: the device copies of the
 * weights (per replica), the optimizer state, the random generator, and the
 * loop that runs one call.
 *
 * A call runs the schedule of the execution strategy: in training, once per
 * device iteration over the gradient accumulation steps, followed by the
 * reduction of the gradients over accumulation steps and replicas and the
 * optimizer step; in inference, once over the device iterations. Every
 * replica runs the schedule on its own micro-batches and its own weights.
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../errors.js';
import { paramValues, type NodeId } from '../ir/graph.js';
import type { Optimizer, OptimizerState } from '../../optim/optimizer.js';
import { microBatchesPerCall, microBatchIndex } from './batch_plan.js';
import type { Executable } from './executable.js';
import { GraphInterpreter, type GraphEnvironment } from './graph_interpreter.js';
import { OutputCollector } from './output_collector.js';
import { RandomSource } from './random_source.js';
import type { RunObserver } from './run_observer.js';
import { ReplicaWeights } from './replica_weights.js';

/** What one call returns: the outputs (per output mode) and, for training, the loss. */
export interface CallResult {
  outputs: tf.Tensor[];
  loss?: tf.Tensor;
}

/** Summed (or running-mean) gradients of one parameter for each of its replica groups. */
interface GroupGradients {
  sums: Array<tf.Tensor | undefined>;
  counts: number[];
}

/** An executable with its device state. */
export class LoadedExecutable {
  private readonly interpreter: GraphInterpreter;
  private readonly weights: ReplicaWeights;
  /** Optimizer state: of all ungrouped parameters together, and per group of each grouped parameter. */
  private optimizerStates = new Map<string, OptimizerState>();
  /** The random generator of the random pseudo-kernels. */
  readonly random: RandomSource;
  /** The loss scale the gradients are computed with. */
  lossScale = 1;
  /** Nodes of each unit of the placement, in graph order. */
  private readonly unitNodes: NodeId[][];
  /** Buffer writes completed by each unit: [param, value]. */
  private readonly unitAssignments: Array<Array<{ param: string; value: number }>>;
  /** Where in the schedule each micro-batch is last worked on: `step * maxWork + index`. */
  private readonly lastWorkOf: number[];
  private readonly maxWork: number;

  constructor(readonly executable: Executable, private optimizer: Optimizer | undefined, seed?: number) {
    const { graph, placement, schedule } = executable;
    this.interpreter = new GraphInterpreter(graph);
    this.random = new RandomSource(seed);
    this.weights = new ReplicaWeights(executable.factors.replicationFactor, executable.replicaGroupings);
    this.unitNodes = placement.units.map(() => []);
    graph.nodes.forEach((node) => this.unitNodes[placement.nodeUnits[node.id]!]!.push(node.id));
    this.unitAssignments = placement.units.map(() => []);
    for (const a of graph.assignments) {
      const source = graph.values[a.value]!.source;
      const unit = source.kind === 'node' ? placement.nodeUnits[source.node]! : 0;
      this.unitAssignments[unit]!.push({ param: a.param, value: a.value });
    }
    this.maxWork = Math.max(1, ...schedule.steps.map((s) => s.work.length));
    this.lastWorkOf = new Array(schedule.microBatches).fill(-1);
    schedule.steps.forEach((step, t) => step.work.forEach((w, i) => (this.lastWorkOf[w.microBatch] = t * this.maxWork + i)));
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
      this.weights.load(name, v);
    }
  }

  /** Writes the device values of the parameters into the host variables. */
  storeWeights(variables: ReadonlyMap<string, tf.Variable>): void {
    for (const name of this.weights.names()) {
      const v = variables.get(name);
      if (!v) continue;
      const value = this.weights.hostValue(name);
      v.assign(value);
      value.dispose();
    }
  }

  /** The device value of a parameter on a replica (owned by the device; clone to keep it). */
  weight(name: string, replica = 0): tf.Tensor | undefined {
    return this.weights.of(replica).get(name);
  }

  /** Replaces the optimizer; its state starts fresh if its type changed. */
  setOptimizer(optimizer: Optimizer): void {
    if (this.optimizer && this.optimizer.type !== optimizer.type) this.resetOptimizerState();
    this.optimizer = optimizer;
  }

  /** Forgets the optimizer state (the device lost it in a fault); the next update starts afresh. */
  discardOptimizerState(): void {
    this.resetOptimizerState();
  }

  private resetOptimizerState(): void {
    for (const state of this.optimizerStates.values()) {
      for (const slots of state.slots.values()) tf.dispose(Object.values(slots));
    }
    this.optimizerStates.clear();
  }

  /**
   * Runs one call on host inputs that have already been checked against the
   * signature; `observer` is told before each unit runs (where device faults
   * are raised).
   */
  run(hostInputs: readonly tf.Tensor[], observer?: RunObserver): CallResult {
    const { executable } = this;
    const f = executable.factors;
    const training = executable.kind === 'training';
    const collector = new OutputCollector(executable.outputMode, executable.outputReturnPeriod, f, executable.outputCount + (training ? 1 : 0));
    const lossScale = training ? tf.scalar(this.lossScale) : undefined;
    const gradients = new Map<string, GroupGradients>();
    const runs = training ? f.deviceIterations : 1;
    try {
      for (let d = 0; d < runs; d++) {
        for (let r = 0; r < f.replicationFactor; r++) this.runSchedule(hostInputs, d, r, lossScale, collector, gradients, observer);
        if (training) this.update(gradients);
        if (executable.broadcastBuffers) for (const a of executable.graph.assignments) this.weights.broadcast(a.param);
      }
      const combined = collector.finish();
      const loss = training ? combined.pop() : undefined;
      return loss ? { outputs: combined, loss } : { outputs: combined };
    } catch (error) {
      collector.dispose();
      throw error;
    } finally {
      lossScale?.dispose();
      for (const g of gradients.values()) tf.dispose(g.sums.filter((t): t is tf.Tensor => t !== undefined));
    }
  }

  /** The inputs of micro-batch `mb` of schedule run `d` on `replica`. */
  private microBatchInputs(hostInputs: readonly tf.Tensor[], d: number, mb: number, replica: number): tf.Tensor[] {
    const { executable } = this;
    const f = executable.factors;
    if (microBatchesPerCall(f) === 1) return [...hostInputs];
    const [iteration, step] = executable.kind === 'training' ? [d, mb] : [mb, 0];
    const index = microBatchIndex(f, iteration, step, replica);
    return hostInputs.map((x) => tf.slice(x, [index * executable.microBatchSize], [executable.microBatchSize]));
  }

  private runSchedule(
    hostInputs: readonly tf.Tensor[],
    d: number,
    replica: number,
    lossScale: tf.Tensor | undefined,
    collector: OutputCollector,
    gradients: Map<string, GroupGradients>,
    observer: RunObserver | undefined,
  ): void {
    const { executable } = this;
    const training = executable.kind === 'training';
    const split = microBatchesPerCall(executable.factors) > 1;
    const envs = new Map<number, { env: GraphEnvironment; inputs: tf.Tensor[] }>();
    try {
      executable.schedule.steps.forEach((step, t) => {
        step.work.forEach((work, i) => {
          let run = envs.get(work.microBatch);
          if (!run) {
            const inputs = this.microBatchInputs(hostInputs, d, work.microBatch, replica);
            const env = this.interpreter.environment({
              inputs: lossScale ? [...inputs, lossScale] : inputs,
              params: this.weights.of(replica),
              random: this.random,
            });
            run = { env, inputs };
            envs.set(work.microBatch, run);
          }
          observer?.beforeWork(work.unit, replica);
          this.interpreter.runNodes(this.unitNodes[work.unit]!, run.env);
          for (const a of this.unitAssignments[work.unit]!) this.weights.set(a.param, replica, run.env.take(a.value));
          if (this.lastWorkOf[work.microBatch] === t * this.maxWork + i) {
            this.finishMicroBatch(run.env, training ? d : work.microBatch, training ? work.microBatch : 0, replica, collector, gradients);
            run.env.dispose();
            if (split) tf.dispose(run.inputs);
            envs.delete(work.microBatch);
          }
        });
      });
    } finally {
      for (const run of envs.values()) {
        run.env.dispose();
        if (split) tf.dispose(run.inputs);
      }
    }
  }

  private finishMicroBatch(env: GraphEnvironment, d: number, g: number, replica: number, collector: OutputCollector, gradients: Map<string, GroupGradients>): void {
    const roles = this.executable.graph.roles;
    const outputs = roles.outputs.map((id) => env.take(id));
    if (roles.loss !== undefined) outputs.push(env.take(roles.loss));
    collector.add(d, g, replica, outputs);
    for (const [name, id] of Object.entries(roles.gradients ?? {})) this.accumulate(gradients, name, replica, env.take(id));
  }

  private accumulate(gradients: Map<string, GroupGradients>, name: string, replica: number, grad: tf.Tensor): void {
    let entry = gradients.get(name);
    if (!entry) {
      const groups = this.weights.groups(name).length;
      entry = { sums: new Array(groups).fill(undefined), counts: new Array(groups).fill(0) };
      gradients.set(name, entry);
    }
    const k = this.weights.groupIndex(name)[replica]!;
    const previous = entry.sums[k];
    const count = ++entry.counts[k]!;
    if (!previous) {
      entry.sums[k] = grad;
      return;
    }
    const { reduction } = this.executable;
    entry.sums[k] =
      reduction.type === 'Mean' && reduction.strategy === 'Running'
        ? tf.tidy(() => tf.add(previous, tf.div(tf.sub(grad, previous), count)))
        : tf.add(previous, grad);
    previous.dispose();
    grad.dispose();
  }

  /** Reduces the gradients of a device iteration and applies the optimizer, per replica group. */
  private update(gradients: Map<string, GroupGradients>): void {
    const { reduction } = this.executable;
    const trained = new Set(this.optimizer?.parameterNames ?? []);
    const reduce = (sum: tf.Tensor, count: number) => {
      const divisor = (reduction.type === 'Mean' && reduction.strategy === 'Post' ? count : 1) * this.lossScale;
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
        batch.grads.set(name, reduce(sum, entry.counts[k]!));
        batch.members.set(name, groups[k]!);
      });
    }
    for (const [key, batch] of batches) {
      let state = this.optimizerStates.get(key);
      if (!state) this.optimizerStates.set(key, (state = this.optimizer!.initialState(batch.weights)));
      const updated = this.optimizer!.apply(batch.weights, batch.grads, state);
      for (const [name, w] of updated) this.weights.setGroup(name, batch.members.get(name)!, w);
      for (const [name, g] of batch.grads) if (!gradients.get(name)!.sums.includes(g)) g.dispose();
    }
    for (const entry of gradients.values()) tf.dispose(entry.sums.filter((t): t is tf.Tensor => t !== undefined));
    gradients.clear();
  }

  /** Frees the device state. */
  dispose(): void {
    this.weights.dispose();
    this.resetOptimizerState();
    this.interpreter.dispose();
  }
}
