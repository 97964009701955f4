/**
 * What a `PoplarExecutor` holds between calls: the wrapped model and its
 * settings, the optimizer, the compiled state (executable and engine), the
 * device's weights against the host's, and the counters its reports read.
 * The executor's lifecycle, run, weight sync, files and reports each work on
 * this one record, so the executor class is only their façade.
 */
import { PoptfjsError } from '../common/errors.js';
import type { Options } from '../options/options.js';
import type { ReplicaGrouping } from '../executable/replica_grouping.js';
import type { LossSpec } from '../trace/loss_function.js';
import type { WrappableModel } from '../trace/model_function.js';
import type { CompiledOptimizerAttributes } from '../../optim/compiled_attributes.js';
import type { Optimizer } from '../../optim/optimizer.js';
import type { OptimizerBuilder } from '../../optim/tfjs_optimizer.js';
import type { HostMemoryEstimate } from '../host_memory/host_memory_estimate.js';
import type { DeviceBinding } from '../engine/device_binding.js';
import { takeOptimizer } from './executor_optimizer.js';
import type { Compiled } from './executable_install.js';
import { ExecutorInstances } from './executor_instances.js';
import { DeviceWeights } from './device_weights.js';
import { CallAnchors } from './call_anchors.js';
import type { WeightHolder } from './model_registry.js';

/** The settings an executor is created with. */
export interface ExecutorConfig {
  readonly model: WrappableModel;
  readonly options: Options;
  readonly training: boolean;
  /** The optimizer, or the builder of one for the traced model's weights (a tfjs optimizer's equivalent). */
  readonly optimizer?: Optimizer | OptimizerBuilder | undefined;
  readonly loss?: LossSpec | undefined;
}

/** The state of one executor, shared by the parts that implement it. */
export class ExecutorState {
  /** The wrapped model (a tf.LayersModel or a function). */
  readonly model: WrappableModel;
  /** The options, frozen when the model was wrapped. */
  readonly options: Options;
  /** True for a `trainingModel`, false for an `inferenceModel`. */
  readonly training: boolean;
  readonly loss: LossSpec | undefined;
  /** The executor itself, as the model registry and the host weight hooks know it. */
  readonly holder: WeightHolder;
  /** The optimizer of a training executor (built when the model is first compiled, if none was given). */
  optimizer: Optimizer | undefined;
  /** Builds the optimizer when the model is first compiled, if none was given. */
  readonly optimizerBuilder: OptimizerBuilder | undefined;
  /** The optimizer attribute values the model was compiled with. */
  compiledOptimizer: CompiledOptimizerAttributes | undefined;
  compiled: Compiled | undefined;
  /** The compilation under way, which concurrent callers wait for. */
  compiling: Promise<Compiled> | undefined;
  destroyed = false;
  /** The device's weights against the host model's. */
  readonly weights: DeviceWeights;
  compilations = 0;
  compileSeconds = 0;
  hostMemoryEstimate: HostMemoryEstimate | undefined;
  /** Calls run so far. */
  calls = 0;
  /** The anchored tensors of the last call, by short name. */
  readonly anchored = new CallAnchors();
  /** Replica groupings set with `parameter(name).replicaGrouping` before compiling, by parameter name. */
  readonly replicaGroupings: Record<string, ReplicaGrouping> = {};
  /** What attaching to the device again must reload: the weights, and after a fault the optimizer state too. */
  reloadOnAttach: 'weights' | 'after-fault' | undefined;
  /** This process's place in a multi-instance run (known once compiled). */
  instances = new ExecutorInstances(undefined);

  constructor(config: ExecutorConfig, holder: WeightHolder) {
    this.model = config.model;
    this.options = config.options;
    this.training = config.training;
    this.holder = holder;
    this.weights = new DeviceWeights(this.model, holder);
    this.optimizer = typeof config.optimizer === 'function' ? undefined : config.optimizer;
    this.optimizerBuilder = typeof config.optimizer === 'function' ? config.optimizer : undefined;
    takeOptimizer(this.optimizer, this.options.settings);
    this.loss = config.loss;
  }

  /** The device binding of the engine, once compiled. */
  get binding(): DeviceBinding | undefined {
    return this.compiled?.engine.deviceBinding;
  }

  /** An error naming `what` once the executor was destroyed. */
  assertUsable(what: string): void {
    if (this.destroyed) {
      throw new PoptfjsError(`${what}: this executor was destroyed; wrap the model again to use it`, { type: 'executor' });
    }
  }

  /** The compiled state; an error naming `what` before compilation or once destroyed. */
  requireCompiled(what: string): Compiled {
    this.assertUsable(what);
    if (!this.compiled) {
      throw new PoptfjsError(`${what}: the model is not compiled yet; call compile(...inputs) or run it once`, { type: 'executor' });
    }
    return this.compiled;
  }
}
