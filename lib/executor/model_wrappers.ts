/**
 * `trainingModel` and `inferenceModel`: wrap a tfjs model for the simulated IPU.
 */
import type * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../errors.js';
import { Options } from '../options/options.js';
import type { LossSpec } from '../trace/loss_function.js';
import { isLayersModel, type WrappableModel } from '../trace/model_function.js';
import { Optimizer } from '../../optim/optimizer.js';
import { PoplarExecutor, type ModelOutput, type TrainingOutput } from './poplar_executor.js';

/** A training executor: calls return `[output, loss]`. */
export type TrainingExecutor = {
  (...inputs: tf.Tensor[]): Promise<TrainingOutput>;
  run(...inputs: tf.Tensor[]): Promise<TrainingOutput>;
} & PoplarExecutor;

/** An inference executor: calls return the model's output(s). */
export type InferenceExecutor = {
  (...inputs: tf.Tensor[]): Promise<ModelOutput>;
  run(...inputs: tf.Tensor[]): Promise<ModelOutput>;
} & PoplarExecutor;

/** Arguments of {@link trainingModel}. */
export interface TrainingModelArgs {
  /** Execution options (frozen by wrapping; default `new Options()`). */
  options?: Options;
  /** The optimizer (default `new optim.SGD(model, { lr: 0.01 })`). */
  optimizer?: Optimizer;
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
 * Wraps `model` for training on the simulated IPU. Each call runs forward,
 * loss, backward and the optimizer step on a host batch and returns
 * `[output, loss]`.
 */
export function trainingModel(model: WrappableModel, args: TrainingModelArgs = {}): TrainingExecutor {
  checkModel(model, 'trainingModel');
  const options = checkOptions(args.options, 'trainingModel');
  if (args.optimizer !== undefined && !(args.optimizer instanceof Optimizer)) {
    throw new PoptfjsError('trainingModel: optimizer must be a poptfjs optimizer, e.g. new optim.SGD(model, { lr: 0.01 })', {
      type: 'executor',
    });
  }
  return new PoplarExecutor({ model, options, training: true, optimizer: args.optimizer, loss: args.loss }) as TrainingExecutor;
}

/**
 * Wraps `model` (or the model of another executor, keeping the two in sync)
 * for inference on the simulated IPU. Each call returns the outputs for a
 * host batch.
 */
export function inferenceModel(model: WrappableModel | PoplarExecutor, args: InferenceModelArgs = {}): InferenceExecutor {
  const source = model instanceof PoplarExecutor ? model : undefined;
  const target = source ? source.model : model;
  checkModel(target, 'inferenceModel');
  const options = args.options === undefined && source ? source.options.clone() : checkOptions(args.options, 'inferenceModel');
  return new PoplarExecutor({ model: target, options, training: false }) as InferenceExecutor;
}
