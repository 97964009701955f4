/**
 * How a compiled executable becomes an executor's: named as `opts.modelName`
 * says, checked against `Options.updatableNamedBuffers`, loaded on an engine
 * on a device acquired for it with the host weights and the optimizer's
 * initial state, and, in a multi-instance run, with the gradients
 * all-reduced across the instances. A failure releases the device again.
 */
import type * as tf from '@tensorflow/tfjs';
import { instanceRun, type InstanceRun } from '../distributed/instance_run.js';
import { MpiInstanceGradients } from '../distributed/mpi_instance_gradients.js';
import { withEngineOptions } from '../options/engine_options.js';
import type { OptionsSettings } from '../options/options_settings.js';
import type { Executable } from '../executable/executable.js';
import { CompiledOptimizerAttributes } from '../../optim/compiled_attributes.js';
import type { Optimizer } from '../../optim/optimizer.js';
import { acquireModelDevice } from '../engine/device_binding.js';
import { Engine } from '../engine/engine.js';
import type { ModelTraceRecord } from './executable_export.js';
import { initialOptimizerState } from './initial_optimizer_state.js';
import { checkUpdatableBuffers } from './updatable_buffers_check.js';

/** Compiled state of an executor. */
export interface Compiled {
  readonly executable: Executable;
  /** The engine the executable runs on, loaded on the executor's device. */
  readonly engine: Engine;
  readonly variables: ReadonlyMap<string, tf.Variable>;
  /** The model as traced, to export it. */
  readonly trace: ModelTraceRecord;
}

/** What to install. */
export interface InstallRequest {
  readonly executable: Executable;
  /** The host variables of the executable's parameters, by parameter name. */
  readonly variables: ReadonlyMap<string, tf.Variable>;
  readonly trace: ModelTraceRecord;
  /** The executor's options settings (the environment's engine options are applied here). */
  readonly settings: OptionsSettings;
  readonly training: boolean;
  readonly optimizer: Optimizer | undefined;
}

/** An installed executable. */
export interface Installed {
  readonly compiled: Compiled;
  /** This process's place in a multi-instance run, if it is one. */
  readonly instances: InstanceRun | undefined;
  /** The optimizer attribute values the model was compiled with. */
  readonly compiledOptimizer: CompiledOptimizerAttributes | undefined;
}

/**
 * Loads a compiled executable on an engine on the executor's device with
 * the weights of `variables`, and makes it the executor's (named as
 * `opts.modelName` says, a run-time option, when it is set).
 */
export function installExecutable(request: InstallRequest): Installed {
  const { variables, trace, training, optimizer } = request;
  const settings = withEngineOptions(request.settings);
  const executable = settings.modelName !== undefined ? { ...request.executable, modelName: settings.modelName } : request.executable;
  checkUpdatableBuffers(executable.graph, settings.updatableNamedBuffers);
  const run = instanceRun(settings.distributed);
  const device = acquireModelDevice(executable, settings);
  const engine = new Engine(
    executable,
    {},
    {
      optimizer,
      seed: settings.randomSeed,
      parallelIpus: settings.parallelIpus,
      instances: training && run ? new MpiInstanceGradients(run.world) : undefined,
      connectionType: settings.connectionType,
      hostWeights: variables,
    },
  );
  try {
    engine.load(device);
  } catch (error) {
    device.detach();
    throw error;
  }
  let compiledOptimizer: CompiledOptimizerAttributes | undefined;
  try {
    optimizer?.attachStateStore(engine, initialOptimizerState(optimizer, executable, engine.lossScale));
    compiledOptimizer = optimizer ? new CompiledOptimizerAttributes(optimizer) : undefined;
  } catch (error) {
    engine.destroy();
    device.detach();
    throw error;
  }
  return { compiled: { executable, engine, variables, trace }, instances: run, compiledOptimizer };
}
