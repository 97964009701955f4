/**
 * The optimizer base: which variables it trains, its hyper-parameters, and
 * the update it applies on the device after the gradients of a step are
 * reduced. Updates run as tfjs ops on the device copies of the weights.
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../lib/errors.js';
import { isLayersModel, trainableVariables } from '../lib/trace/model_function.js';

/** What an optimizer trains: a layers model (its trainable weights) or a list of variables. */
export type OptimizerTarget = tf.LayersModel | readonly tf.Variable[];

/** Per-parameter optimizer state tensors (momentum, moments, ...), by slot name. */
export type ParameterState = Record<string, tf.Tensor>;

/** The optimizer state held on the device: per parameter slots and the step count. */
export interface OptimizerState {
  step: number;
  slots: Map<string, ParameterState>;
}

/** Resolves an optimizer target into the variables it trains. */
function targetVariables(target: OptimizerTarget): tf.Variable[] {
  if (isLayersModel(target)) return trainableVariables(target)!;
  if (Array.isArray(target) && target.every((v) => v instanceof tf.Variable)) return [...target];
  throw new PoptfjsError('an optimizer takes a tf.LayersModel or an array of tf.Variable to train', { type: 'optimizer' });
}

/** The base class of poptfjs optimizers. */
export abstract class Optimizer {
  /** The optimizer's type name (`'SGD'`, ...). */
  abstract readonly type: string;
  /** The variables this optimizer trains. */
  readonly variables: readonly tf.Variable[];

  constructor(target: OptimizerTarget) {
    this.variables = targetVariables(target);
  }

  /** Names of the trained variables. */
  get parameterNames(): string[] {
    return this.variables.map((v) => v.name);
  }

  /** @internal The state a fresh optimizer starts from for the given weights. */
  abstract initialState(weights: ReadonlyMap<string, tf.Tensor>): OptimizerState;

  /**
   * @internal Applies one update: returns the new weight for each parameter in
   * `grads`, and updates `state` in place (old state tensors are disposed).
   * Gradients are already reduced and unscaled.
   */
  abstract apply(
    weights: ReadonlyMap<string, tf.Tensor>,
    grads: ReadonlyMap<string, tf.Tensor>,
    state: OptimizerState,
  ): Map<string, tf.Tensor>;

  /** The hyper-parameters, for reports and serialization. */
  abstract hyperParameters(): Record<string, number | boolean>;
}
