/**
 * `trainingModel` and `inferenceModel`: wrap a tfjs model for the simulated
 * IPU; `load`: restore one from an exported executable.
 */
import type * as tf from '@tensorflow/tfjs';
import { initBackend } from '../backend/backend_selection.js';
import { PoptfjsError } from '../common/errors.js';
import { readExecutableFile } from '../files/executable_file.js';
import { Options } from '../options/options.js';
import type { LossSpec } from '../trace/loss_function.js';
import { isLayersModel, type WrappableModel } from '../trace/model_function.js';
import { Optimizer } from '../../optim/optimizer.js';
import { isTfjsOptimizer, tfjsOptimizerEquivalent } from '../../optim/tfjs_optimizer.js';
import { checkInferenceAccumulation } from './inference_accumulation.js';
import { rebuildOptimizer } from '../files/optimizer_reconstruction.js';
import type { NestedTensors } from '../trace/nested_values.js';
import { PoplarExecutor, type ModelOutput } from './poplar_executor.js';
import { optionsOfExecutableFile, restoreExportedModel, type EditOptions } from './precompiled_model.js';

/**
 * A training executor: calls return `[output, loss]`. A function model may
 * take arrays and plain objects of tensors and return them: `Output` types
 * its output (e.g. `trainingModel<{ logits: tf.Tensor }>(fn)`).
 */
export type TrainingExecutor<Output = ModelOutput> = {
  (...inputs: NestedTensors[]): Promise<[Output, tf.Tensor]>;
  run(...inputs: NestedTensors[]): Promise<[Output, tf.Tensor]>;
} & PoplarExecutor;

/**
 * An inference executor: calls return the model's output(s). A function
 * model may take arrays and plain objects of tensors and return them:
 * `Output` types its output (e.g. `inferenceModel<[tf.Tensor, { a: tf.Tensor }]>(fn)`).
 */
export type InferenceExecutor<Output = ModelOutput> = {
  (...inputs: NestedTensors[]): Promise<Output>;
  run(...inputs: NestedTensors[]): Promise<Output>;
} & PoplarExecutor;

/**
 * The properties and methods of a wrapped `tf.LayersModel` that an executor
 * shows where it has none of that name (`executor.layers`,
 * `executor.getLayer('fc')`), as PopTorch's wrapper forwards attribute
 * access to the module.
 */
export type ModelAttributes<M> = [M] extends [tf.LayersModel] ? Omit<M, keyof PoplarExecutor> : unknown;

/** Arguments of {@link trainingModel}. */
export interface TrainingModelArgs {
  /** Execution options (frozen by wrapping; default `new Options()`). */
  options?: Options;
  /**
   * The optimizer: a poptfjs one, or a fresh tfjs one (`tf.train.sgd`,
   * `momentum`, `adam`, `rmsprop`) trained as the poptfjs optimizer taking
   * the same steps. Default: the optimizer a compiled `tf.LayersModel` was
   * compiled with, the same way, else `new optim.SGD(model, { lr: 0.01 })`.
   */
  optimizer?: Optimizer | tf.Optimizer;
  /**
   * The loss: a tfjs loss name or a function `(yTrue, yPred) => tf.Tensor`.
   * Without it, the model's compiled loss is used, or the loss the model
   * returns through `ops.identityLoss`. With a loss, calls take the model's
   * inputs followed by one target per output.
   */
  loss?: LossSpec;
}

/** Arguments of {@link inferenceModel}. */
export interface InferenceModelArgs {
  /** Execution options (frozen by wrapping; default `new Options()`). */
  options?: Options;
}

function checkModel(model: unknown, what: string): asserts model is WrappableModel {
  if (!isLayersModel(model) && typeof model !== 'function') {
    throw new PoptfjsError(`${what}: expected a tf.LayersModel or a function of tensors, got ${model === null ? 'null' : typeof model}`, {
      type: 'executor',
    });
  }
}

function checkOptions(options: unknown, what: string): Options {
  if (options === undefined) return new Options();
  if (!(options instanceof Options)) throw new PoptfjsError(`${what}: options must be a poptfjs Options object`, { type: 'executor' });
  return options;
}

/**
 * Wraps `model` (or the model of another executor, as PopTorch accepts a
 * `PoplarExecutor`, keeping the two in sync) for training on the simulated
 * IPU. Each call runs forward, loss, backward and the optimizer step on a
 * host batch and returns `[output, loss]`. Without `options`, an executor's
 * model is wrapped with a copy of that executor's options. A model has one
 * live training executor at a time: wrapping it again for training is an
 * error until that executor is destroyed.
 */
export function trainingModel<Output = ModelOutput, M extends WrappableModel | PoplarExecutor = WrappableModel>(
  model: M,
  args: TrainingModelArgs = {},
): TrainingExecutor<Output> & ModelAttributes<M> {
  const source = model instanceof PoplarExecutor ? model : undefined;
  const target = source ? source.model : model;
  checkModel(target, 'trainingModel');
  const options = args.options === undefined && source ? source.options.clone() : checkOptions(args.options, 'trainingModel');
  const given = args.optimizer;
  if (given !== undefined && !(given instanceof Optimizer) && !isTfjsOptimizer(given)) {
    throw new PoptfjsError('trainingModel: optimizer must be a poptfjs optimizer, e.g. new optim.SGD(model, { lr: 0.01 }), or a tfjs one such as tf.train.adam(1e-3)', {
      type: 'executor',
    });
  }
  const optimizer = isTfjsOptimizer(given) ? tfjsOptimizerEquivalent(given, 'trainingModel') : given;
  return new PoplarExecutor({ model: target, options, training: true, optimizer, loss: args.loss }) as TrainingExecutor<Output> & ModelAttributes<M>;
}

/**
 * Wraps `model` (or the model of another executor, keeping the two in sync)
 * for inference on the simulated IPU. Each call returns the outputs for a
 * host batch. Without `options`, an executor's model is wrapped with a copy
 * of that executor's options whose `Training.gradientAccumulation` is 1.
 * Options with `Training.gradientAccumulation` above 1 are refused, as in
 * PopTorch.
 */
export function inferenceModel<Output = ModelOutput, M extends WrappableModel | PoplarExecutor = WrappableModel>(
  model: M,
  args: InferenceModelArgs = {},
): InferenceExecutor<Output> & ModelAttributes<M> {
  const source = model instanceof PoplarExecutor ? model : undefined;
  const target = source ? source.model : model;
  checkModel(target, 'inferenceModel');
  const options = args.options === undefined && source ? inferenceCopy(source.options) : checkOptions(args.options, 'inferenceModel');
  checkInferenceAccumulation(options);
  return new PoplarExecutor({ model: target, options, training: false }) as InferenceExecutor<Output> & ModelAttributes<M>;
}

/** A copy of a training executor's options for inference: the same options without gradient accumulation. */
function inferenceCopy(options: Options): Options {
  const copy = options.clone();
  copy.Training.gradientAccumulation(1);
  return copy;
}

/** Arguments of {@link load}. */
export interface LoadArgs {
  /**
   * Changes the options before the executor is created, e.g. to choose the
   * device: `(opts) => opts.useIpuId(1)`. Only run-time options
   * (`RUNTIME_OPTION_KEYS`) take effect; changes to others are ignored with
   * a warning.
   */
  editOpts?: EditOptions;
}

/**
 * Restores a ready-to-run executor from a file written by
 * `executor.compileAndExport(path, ...inputs)`: the executable, the options
 * it was compiled with, the optimizer and device state, and the model,
 * rebuilt as a tfjs model from its trace (`executor.model`) holding the
 * exported weights. Files exported with `{ exportModel: false }` hold no
 * model: wrap the model again and call `executor.loadExecutable(path)`.
 * Models loaded from exports of the same tfjs model share their host
 * weights, but not their devices: copy weights between them with
 * `copyWeightsToHost()` and `copyWeightsToDevice()`, or wrap one from the
 * other (`inferenceModel(trainingExecutor)`) and `loadExecutable` to keep
 * them in sync.
 */
export async function load(path: string, args: LoadArgs = {}): Promise<TrainingExecutor | InferenceExecutor> {
  const file = readExecutableFile(path);
  if (!file.model) {
    throw new PoptfjsError(
      `load(${path}): the file was exported with { exportModel: false }, so it holds no model; ` +
        `wrap the model with trainingModel or inferenceModel and call executor.loadExecutable('${path}')`,
      { type: 'executor', location: path },
    );
  }
  const options = optionsOfExecutableFile(file, path, args.editOpts);
  await initBackend(options.settings.backend);
  const { model, variables } = restoreExportedModel(file, file.model, path);
  const training = file.executable.kind === 'training';
  const optimizer = training && file.optimizer ? rebuildOptimizer(file.optimizer, (name) => variables.get(name), path) : undefined;
  const executor = training ? trainingModel(model, { options, ...(optimizer ? { optimizer } : {}) }) : inferenceModel(model, { options });
  executor.attachExportedExecutable(file, path, variables);
  return executor;
}
