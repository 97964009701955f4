/**
 * An executable loaded on the simulated device: the device copies of the
 * weights (per replica), the optimizer state (device_optimizer_states.ts),
 * the random generator, and the loop that runs one call.
 *
 * A call runs the schedule of the execution strategy: in training, once per
 * device iteration over the gradient accumulation steps, followed by the
 * reduction of the gradients over accumulation steps and replicas and the
 * optimizer step (gradient_update.ts); in inference, once over the device
 * iterations. Every replica runs the schedule on its own micro-batches
 * (host_batch.ts) and its own weights. The device state is exported and
 * imported whole (checked by device_state_check.ts).
 *
 * With `parallelIpus`, the units of a multi-IPU executable run on worker
 * threads, one per IPU ({@link WorkerIpuExecution}); everything else (inputs,
 * random draws, output collection, gradient accumulation, loss scaling, the
 * optimizer step, the replicas' weights) stays here, in the same order.
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../common/errors.js';
import { paramValues, type Node, type NodeId } from '../ir/graph.js';
import { hostHeap } from '../backend/host_heap.js';
import { withWasmThreads } from '../backend/wasm_thread_pool.js';
import type { Optimizer, OptimizerSettings } from '../../optim/optimizer.js';
import type { OptimizerStateData, OptimizerStateStore } from '../../optim/optimizer_state.js';
import { DEFAULT_FLOAT16_ARITHMETIC } from '../executable/float16_arithmetic_settings.js';
import { Float16Rounding } from '../precision/float16_rounding.js';
import { markFloat16 } from '../precision/half.js';
import { microBatchesPerCall, microBatchIndex } from '../executable/batch_plan.js';
import type { DeviceState } from '../executable/device_state.js';
import type { Executable } from '../executable/executable.js';
import type { ScheduledWork } from '../strategy/schedule.js';
import { GraphInterpreter, type GraphEnvironment } from './graph_interpreter.js';
import { causedByOutOfMemory, executableMemoryContext, hostOutOfMemory, kernelMemoryGuard } from '../host_memory/host_memory_error.js';
import { OutputCollector } from './output_collector.js';
import { RandomSource } from '../executable/random_source.js';
import type { RunObserver } from './run_observer.js';
import { checkDeviceState } from './device_state_check.js';
import { DeviceOptimizerStates } from './device_optimizer_states.js';
import { GradientUpdate, type GroupGradients, type OptimizerInUse } from './gradient_update.js';
import { HostBatch, notCopiedBack } from './host_batch.js';
import type { InstanceGradients } from './instance_gradients.js';
import { ReplicaWeights } from './replica_weights.js';
import { WeightDerivedCache } from './weight_derived_cache.js';
import type { MeasuredOverlap } from './worker_ipus/measured_overlap.js';
import { WorkerIpuExecution } from './worker_ipus/worker_ipu_execution.js';
import { computeSetTrace, kernelTrace } from './execution_trace.js';
import { updatedWeightOf } from '../executable/anchor_names.js';

/** What one call returns: the outputs (per output mode), for training the loss, and the anchored tensors (per their modes) by name. */
export interface CallResult {
  outputs: tf.Tensor[];
  loss?: tf.Tensor;
  anchors?: Map<string, tf.Tensor>;
}

/** What a call collects: the model's outputs (then the loss), and each anchored tensor. */
interface CallCollectors {
  readonly outputs: OutputCollector;
  readonly anchors: readonly OutputCollector[];
}

/** How a loaded executable runs. */
export interface LoadOptions {
  /** Run the units of each IPU on a worker thread of its own (`Options.parallelIpus`). */
  readonly parallelIpus?: boolean;
  /** One instance of a multi-instance run: its replica-reduced gradients are summed over every instance before each update. */
  readonly instances?: InstanceGradients;
  /** Where print nodes (`ops.ipuPrintTensor`) run in this process print their value; default: the `op` logger. */
  readonly printTensor?: (node: Node, value: tf.Tensor) => void;
  /**
   * Where the trace of the engine's `debug.trace` goes, line by line: each
   * compute set run (a unit on a micro-batch and replica), then each of its
   * kernels with the values it read and made (execution_trace.ts). Tracing
   * runs every IPU in this process and every kernel in its compute set.
   */
  readonly trace?: (line: string) => void;
}

/** A micro-batch being run: its environment and the inputs sliced for it. */
interface MicroBatchRun {
  readonly env: GraphEnvironment;
  readonly inputs: tf.Tensor[];
}

/** An executable with its device state (it holds its optimizer's state: the optimizer reads and writes it there). */
export class LoadedExecutable implements OptimizerStateStore {
  private readonly interpreter: GraphInterpreter;
  private readonly weights: ReplicaWeights;
  /** Optimizer state: of all ungrouped parameters together, and per group of each grouped parameter. */
  private readonly optimizerStates: DeviceOptimizerStates;
  /** The gradient accumulation and weight update of training calls. */
  private readonly update: GradientUpdate;
  /** The random generator of the random pseudo-kernels. */
  readonly random: RandomSource;
  /** The loss scale the gradients are computed with (it moves under automatic loss scaling). */
  lossScale = 1;
  /** The optimizer's values the updates use: those of the last `setOptimizer` (or construction). */
  private optimizerSettings: OptimizerSettings | undefined;
  /** How float16 values are rounded. */
  private readonly rounding: Float16Rounding;
  /** The parameters held in float16. */
  private readonly halfParams: ReadonlySet<string>;
  /** Device iterations run so far. */
  iterations = 0;
  /** Nodes of each unit of the placement, in graph order. */
  private readonly unitNodes: NodeId[][];
  /** Buffer writes completed by each unit: [param, value]. */
  private readonly unitAssignments: Array<Array<{ param: string; value: number }>>;
  /** Where in the schedule each micro-batch is last worked on: `step * maxWork + index`. */
  private readonly lastWorkOf: number[];
  private readonly maxWork: number;
  /** The worker IPUs, when `parallelIpus` is on and they can run this executable. */
  private readonly workerIpus: WorkerIpuExecution | undefined;
  /** The error for a backend that ran out of memory while running. */
  private readonly outOfMemory: (cause: unknown) => Error;
  /** The other instances of a multi-instance run, if this is one. */
  private readonly instanceGradients: InstanceGradients | undefined;
  /** Where the trace goes, when the engine traces. */
  private readonly trace: ((line: string) => void) | undefined;
  /** The values made from the weights alone, kept between calls until the weights change (in-process runs only). */
  private readonly weightDerived: WeightDerivedCache | undefined;

  constructor(
    readonly executable: Executable,
    private optimizer: Optimizer | undefined,
    seed?: number,
    options: LoadOptions = {},
  ) {
    const { graph, placement, schedule } = executable;
    const numerics = executable.numerics ?? { ...DEFAULT_FLOAT16_ARITHMETIC, automaticLossScaling: false };
    const heap = hostHeap();
    const context = () => executableMemoryContext(executable, 'running', options.parallelIpus ?? false);
    this.outOfMemory = (error) => hostOutOfMemory(heap, context(), error);
    const beforeKernel = kernelMemoryGuard(graph, heap, context);
    this.trace = options.trace;
    this.interpreter = new GraphInterpreter(graph, {
      float16: numerics,
      ...(beforeKernel ? { beforeKernel } : {}),
      ...(options.printTensor ? { printTensor: options.printTensor } : {}),
      ...(options.trace ? { afterKernel: kernelTrace(graph, options.trace) } : {}),
    });
    this.random = new RandomSource(seed);
    this.rounding = new Float16Rounding(numerics.stochasticRounding, this.random);
    this.halfParams = new Set([...paramValues(graph)].filter(([, v]) => v.precision === 'float16').map(([name]) => name));
    if (optimizer) this.useOptimizer(optimizer);
    this.weights = new ReplicaWeights(executable.factors.replicationFactor, executable.replicaGroupings);
    this.optimizerStates = new DeviceOptimizerStates(executable, this.weights);
    this.update = new GradientUpdate(executable, this.weights, this.optimizerStates, this.rounding, this.halfParams, options.instances);
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
    this.workerIpus = WorkerIpuExecution.forExecutable(executable, this.random, (options.parallelIpus ?? false) && !options.trace);
    const drawsRandomly = (node: Node) => numerics.stochasticRounding && node.outputs.some((id) => graph.values[id]!.precision === 'float16');
    this.weightDerived = this.workerIpus || this.trace ? undefined : new WeightDerivedCache(graph, this.interpreter, this.weights, (node) => !drawsRandomly(node));
    this.instanceGradients = options.instances;
    const grouped = Object.keys(executable.replicaGroupings);
    if (options.instances && grouped.length > 0) {
      throw new PoptfjsError(
        `parameter '${grouped[0]}' is split across replica groups, which a run of ${options.instances.instances} instances does not support; run it in one process`,
        { type: 'replication', location: grouped[0]! },
      );
    }
  }

  /**
   * What the worker IPUs measured over the last call that ran on them (busy
   * time per IPU, wall time, overlap); undefined when this executable runs
   * in-process.
   */
  measuredOverlap(): MeasuredOverlap | undefined {
    return this.workerIpus?.measuredOverlap();
  }

  /** Ends the worker IPU threads, if any (on detach); the next call starts them again. */
  stopWorkerIpus(): void {
    this.workerIpus?.stop();
  }

  /** Names of the graph's parameters. */
  get parameterNames(): string[] {
    return [...paramValues(this.executable.graph).keys()];
  }

  /**
   * Uploads the host values of the parameters, or of those named in `names`
   * (copy-on-write: no data is copied until one side changes).
   */
  loadWeights(variables: ReadonlyMap<string, tf.Variable>, names: readonly string[] = this.parameterNames): void {
    for (const name of names) {
      const v = variables.get(name);
      if (!v) throw new PoptfjsError(`no host variable for parameter '${name}'`, { type: 'runtime' });
      if (v.isDisposed) throw new PoptfjsError(`the host variable '${name}' was disposed`, { type: 'runtime' });
      this.weights.load(name, v);
    }
  }

  /** Loads the host value of one parameter: whole on every replica, or its slices across the replica groups (copy-on-write). */
  loadWeight(name: string, host: tf.Tensor): void {
    this.weights.load(name, host);
  }

  /** Sets the device value of a parameter on one replica (the tensor is owned from now on). */
  setWeight(name: string, replica: number, value: tf.Tensor): void {
    this.weights.set(name, replica, value);
  }

  /** The host value of a parameter (the caller owns it): replica 0's, or the replica groups' slices stacked. */
  hostWeight(name: string): tf.Tensor {
    return this.weights.hostValue(name);
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

  /**
   * Replaces the optimizer, or takes the new values of the same one: later
   * updates use its current values. Its state starts fresh if its type
   * changed; a new `lossScaling` value becomes the loss scale.
   */
  setOptimizer(optimizer: Optimizer): void {
    if (this.optimizer && this.optimizer.type !== optimizer.type) this.optimizerStates.reset();
    this.optimizer = optimizer;
    this.useOptimizer(optimizer);
  }

  private useOptimizer(optimizer: Optimizer): void {
    const previous = this.optimizerSettings?.global.lossScaling;
    this.optimizerSettings = optimizer.settings();
    const requested = this.optimizerSettings.global.lossScaling as number;
    if (requested !== previous) this.lossScale = requested;
  }

  /** The optimizer the updates apply and its values, once there is one. */
  private optimizerInUse(): OptimizerInUse | undefined {
    return this.optimizer && this.optimizerSettings ? { optimizer: this.optimizer, settings: this.optimizerSettings } : undefined;
  }

  /** A host copy of the optimizer state and the loss scale. */
  readOptimizerState(): OptimizerStateData {
    return { lossScale: this.lossScale, states: this.optimizerStates.records() };
  }

  /**
   * Replaces the optimizer state and the loss scale. Keys are `''` (unsplit
   * parameters) or `name#group` (a replica group of a split parameter); each
   * slot must have the shape of its parameter's value on the device.
   */
  writeOptimizerState(data: OptimizerStateData): void {
    this.optimizerStates.replace(data.states);
    this.lossScale = data.lossScale;
  }

  /** Forgets the optimizer state (the device lost it in a fault); the next update starts afresh. */
  discardOptimizerState(): void {
    this.optimizerStates.reset();
  }

  /**
   * Runs one call on host inputs that have already been checked against the
   * signature; `observer` is told before each unit runs (where device faults
   * are raised). The kernels outside the graph (gradient sums, the optimizer
   * step) compute on one wasm thread when the pool can be switched
   * (wasm_thread_choice.ts).
   */
  run(hostInputs: readonly tf.Tensor[], observer?: RunObserver): CallResult {
    return withWasmThreads(1, () => this.runCall(hostInputs, observer));
  }

  // biome-ignore lint/complexity/noExcessiveCognitiveComplexity: the steps of one call (device iterations, replicas, the shared gradients of several instances, the optimizer step), with the error handling each needs in place
  private runCall(hostInputs: readonly tf.Tensor[], observer?: RunObserver): CallResult {
    const { executable } = this;
    const f = executable.factors;
    const training = executable.kind === 'training';
    const collector: CallCollectors = {
      outputs: new OutputCollector(executable.outputMode, executable.outputReturnPeriod, f, executable.outputCount + (training ? 1 : 0)),
      anchors: (executable.anchors ?? []).map((a) => new OutputCollector(a.outputMode, a.outputReturnPeriod, f, 1)),
    };
    const gradients = new Map<string, GroupGradients>();
    const runs = training ? f.deviceIterations : 1;
    const workers = this.workerIpus?.ready() ? this.workerIpus : undefined;
    workers?.beginCall();
    const inputs = executable.syntheticData ? this.syntheticInputs(hostInputs) : this.deviceInputs(hostInputs);
    const batch = new HostBatch(inputs);
    try {
      for (let d = 0; d < runs; d++) {
        const lossScale = training ? tf.scalar(this.lossScale) : undefined;
        // In a multi-instance run, a failure of this iteration is first told to the other instances, which wait for this one's gradients.
        const shared = training ? this.instanceGradients : undefined;
        let failure: { error: unknown } | undefined;
        try {
          for (let r = 0; r < f.replicationFactor; r++) this.runSchedule(batch, d, r, lossScale, collector, gradients, observer, workers);
        } catch (error) {
          if (!shared) throw error;
          failure = { error };
        } finally {
          lossScale?.dispose();
        }
        shared?.checkIteration(this.iterations + d, failure);
        if (training) this.lossScale = this.update.apply(gradients, this.optimizerInUse()!, this.lossScale);
        if (training) this.collectUpdatedWeights(d, collector);
      }
      this.iterations += f.deviceIterations;
      const hostValues = (values: tf.Tensor[], ids: readonly number[]) => (executable.syntheticData ? notCopiedBack(values) : this.hostOutputs(values, ids));
      const { outputs: outputIds, anchors: anchorIds } = this.returnedValues();
      const combined = hostValues(collector.outputs.finish(), outputIds);
      const loss = training ? combined.pop() : undefined;
      const anchors = new Map((executable.anchors ?? []).map((a, i) => [a.name, hostValues(collector.anchors[i]!.finish(), [anchorIds[i]!])[0]!]));
      workers?.endCall();
      return { outputs: combined, ...(loss ? { loss } : {}), ...(anchors.size > 0 ? { anchors } : {}) };
    } catch (error) {
      collector.outputs.dispose();
      for (const c of collector.anchors) c.dispose();
      throw causedByOutOfMemory(error) ? this.outOfMemory(error) : error;
    } finally {
      inputs.forEach((t, i) => t !== hostInputs[i] && t.dispose());
      for (const g of gradients.values()) tf.dispose(g.sums.filter((t): t is tf.Tensor => t !== undefined));
    }
  }

  /** The host inputs as the device holds them: float16 inputs rounded to float16 (cast on the way in). */
  private deviceInputs(hostInputs: readonly tf.Tensor[]): tf.Tensor[] {
    const { graph } = this.executable;
    return hostInputs.map((t, i) => (graph.values[graph.inputs[i]!]!.precision === 'float16' ? this.rounding.round(t) : t));
  }

  /**
   * Inputs made on the device instead of copied from the host (synthetic
   * data, PopART's `RandomNormal` mode): float inputs drawn from a standard
   * normal distribution by the device's generator, integer and boolean ones
   * zeros (valid indices and labels), in the shapes of the host inputs.
   */
  private syntheticInputs(hostInputs: readonly tf.Tensor[]): tf.Tensor[] {
    const { graph } = this.executable;
    return hostInputs.map((t, i) => {
      if (t.dtype !== 'float32') return tf.zeros(t.shape, t.dtype);
      const values = tf.tensor(this.random.normal(t.size, 0, 1), t.shape, 'float32');
      return graph.values[graph.inputs[i]!]!.precision === 'float16' ? this.rounding.replace(values) : values;
    });
  }

  /** Hands each anchored `UpdatedVar___<weight>` its weight on every replica after the update of device iteration `d`, as its last micro-step's value. */
  private collectUpdatedWeights(d: number, collector: CallCollectors): void {
    const { factors } = this.executable;
    (this.executable.anchors ?? []).forEach((anchor, i) => {
      const weight = updatedWeightOf(anchor.longName);
      if (weight === undefined) return;
      for (let r = 0; r < factors.replicationFactor; r++) collector.anchors[i]!.add(d, factors.gradientAccumulation - 1, r, [this.weights.of(r).get(weight)!.clone()]);
    });
  }

  /** The values a call returns: the model's outputs (then the loss), and the anchored values, in order. */
  private returnedValues(): { outputs: number[]; anchors: number[] } {
    const { graph, outputCount } = this.executable;
    const model = graph.roles.outputs.slice(0, outputCount);
    return { outputs: graph.roles.loss !== undefined ? [...model, graph.roles.loss] : model, anchors: graph.roles.outputs.slice(outputCount) };
  }

  /** Combined values of the graph values `ids` as the host gets them: float16 ones rounded (a `Sum` of float16 values) and marked float16. */
  private hostOutputs(outputs: tf.Tensor[], ids: readonly number[]): tf.Tensor[] {
    const { graph } = this.executable;
    return outputs.map((t, i) => (graph.values[ids[i]!]!.precision === 'float16' ? markFloat16(this.rounding.replace(t)) : t));
  }

  /** The inputs of micro-batch `mb` of schedule run `d` on `replica`. */
  private microBatchInputs(batch: HostBatch, d: number, mb: number, replica: number): tf.Tensor[] {
    const { executable } = this;
    const f = executable.factors;
    if (microBatchesPerCall(f) === 1) return [...batch.tensors];
    const [iteration, step] = executable.kind === 'training' ? [d, mb] : [mb, 0];
    const index = microBatchIndex(f, iteration, step, replica);
    return batch.tensors.map((_, i) => batch.slice(i, index * executable.microBatchSize, executable.microBatchSize));
  }

  private runSchedule(
    batch: HostBatch,
    d: number,
    replica: number,
    lossScale: tf.Tensor | undefined,
    collector: CallCollectors,
    gradients: Map<string, GroupGradients>,
    observer: RunObserver | undefined,
    workers: WorkerIpuExecution | undefined,
  ): void {
    const { executable } = this;
    const training = executable.kind === 'training';
    const split = microBatchesPerCall(executable.factors) > 1;
    const envs = new Map<number, MicroBatchRun>();
    const open = (microBatch: number): MicroBatchRun => {
      let run = envs.get(microBatch);
      if (!run) {
        const inputs = this.microBatchInputs(batch, d, microBatch, replica);
        const derived = workers ? undefined : this.weightDerived?.values(replica, this.random);
        const env = this.interpreter.environment({
          inputs: lossScale ? [...inputs, lossScale] : inputs,
          params: this.weights.of(replica),
          random: this.random,
          ...(derived ? { derived, ahead: this.weightDerived!.ahead } : {}),
        });
        run = { env, inputs };
        envs.set(microBatch, run);
      }
      return run;
    };
    // What follows a unit's nodes: its buffer writes, then, after the micro-batch's last unit, its outputs and gradients.
    const complete = (work: ScheduledWork, t: number, i: number): void => {
      const run = envs.get(work.microBatch)!;
      for (const a of this.unitAssignments[work.unit]!) this.weights.set(a.param, replica, run.env.take(a.value));
      if (this.lastWorkOf[work.microBatch] === t * this.maxWork + i) {
        this.finishMicroBatch(run.env, training ? d : work.microBatch, training ? work.microBatch : 0, replica, collector, gradients);
        run.env.dispose();
        if (split) tf.dispose(run.inputs);
        envs.delete(work.microBatch);
      }
    };
    try {
      if (workers) {
        workers.runSchedule(replica, { open: (mb) => open(mb).env, beforeWork: (unit) => observer?.beforeWork(unit, replica), complete });
        return;
      }
      executable.schedule.steps.forEach((step, t) => {
        step.work.forEach((work, i) => {
          const run = open(work.microBatch);
          observer?.beforeWork(work.unit, replica);
          this.trace?.(computeSetTrace(executable, work.unit, work.microBatch, replica));
          this.interpreter.runNodes(this.unitNodes[work.unit]!, run.env);
          complete(work, t, i);
        });
      });
    } finally {
      for (const run of envs.values()) {
        run.env.dispose();
        if (split) tf.dispose(run.inputs);
      }
    }
  }

  private finishMicroBatch(env: GraphEnvironment, d: number, g: number, replica: number, collector: CallCollectors, gradients: Map<string, GroupGradients>): void {
    const roles = this.executable.graph.roles;
    const returned = this.returnedValues();
    collector.outputs.add(
      d,
      g,
      replica,
      returned.outputs.map((id) => env.take(id)),
    );
    const anchors = this.executable.anchors ?? [];
    returned.anchors.forEach((id, i) => {
      // An updated weight is read after the update (collectUpdatedWeights): the graph's value is the weight before it.
      if (updatedWeightOf(anchors[i]!.longName) === undefined) collector.anchors[i]!.add(d, g, replica, [env.take(id)]);
    });
    const use = this.optimizerInUse();
    for (const [name, id] of Object.entries(roles.gradients ?? {})) this.update.accumulate(gradients, name, replica, env.take(id), use);
  }

  /**
   * A copy of the device state (the caller owns its tensors): every
   * replica's weights (unless `weights` is false), the optimizer state, the
   * loss scale, the random generator's state and the iteration count.
   */
  exportState(options: { weights: boolean }): DeviceState<tf.Tensor> {
    const replicas = this.executable.factors.replicationFactor;
    const weights = new Map<string, tf.Tensor[]>();
    if (options.weights) {
      for (const name of this.weights.names())
        weights.set(
          name,
          Array.from({ length: replicas }, (_, r) => tf.clone(this.weights.of(r).get(name)!)),
        );
    }
    const optimizerStates = this.optimizerStates.snapshots();
    return {
      ...(options.weights ? { weights } : {}),
      optimizerStates,
      lossScale: this.lossScale,
      randomState: this.random.getState(),
      iterations: this.iterations,
    };
  }

  /**
   * Replaces the device state with `state`, whose tensors are owned from now
   * on (weights absent from it are kept). Parameter names are this
   * executable's; a weight of the wrong shape or replica count is an error
   * naming it, and nothing is changed.
   */
  importState(state: DeviceState<tf.Tensor>): void {
    checkDeviceState(this.executable, state);
    this.random.setState(state.randomState);
    for (const [name, values] of state.weights ?? []) values.forEach((t, r) => this.weights.set(name, r, t));
    this.optimizerStates.restore(state.optimizerStates);
    this.lossScale = state.lossScale;
    this.iterations = state.iterations;
  }

  /** Frees the device state and ends the worker IPU threads. */
  dispose(): void {
    this.workerIpus?.stop();
    this.weightDerived?.dispose();
    this.weights.dispose();
    this.optimizerStates.reset();
    this.update.dispose();
    this.interpreter.dispose();
  }
}
