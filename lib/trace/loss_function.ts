/**
 * The loss of a training model: a tfjs loss name, a `loss(yTrue, yPred)`
 * function (tfjs's argument order), the model's compiled loss, or a loss the
 * model computes itself with `ops.identityLoss`.
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../common/errors.js';
import { collectLosses } from './loss_marker.js';
import { canonicalLossName, lossNamesText } from './loss_names.js';
import { callModel, flattenOutputs, isLayersModel, modelInputCount, modelName, type WrappableModel } from './model_function.js';

/** A loss function in tfjs's argument order, returning per-sample losses or a scalar. */
export type LossFunction = (yTrue: tf.Tensor, yPred: tf.Tensor) => tf.Tensor;

/** A loss as given by the user: a tfjs loss name (`'meanSquaredError'`, ...) or a function. */
export type LossSpec = string | LossFunction;

const byName = new Map<string, LossFunction>();

/** The tfjs loss function `name` names (or an alias of it, see `loss_names.ts`), exactly as `model.compile({ loss })` resolves it. */
export function lossByName(name: string): LossFunction {
  const canonical = canonicalLossName(name);
  if (canonical === undefined) {
    throw new PoptfjsError(`unknown loss '${name}'; expected a function (yTrue, yPred) => tf.Tensor or one of: ${lossNamesText()}`, {
      type: 'options',
    });
  }
  const cached = byName.get(canonical);
  if (cached) return cached;
  const input = tf.input({ shape: [1] });
  const probe = tf.model({ inputs: input, outputs: input });
  probe.compile({ optimizer: 'sgd', loss: canonical });
  const fn = (probe as unknown as { lossFunctions: LossFunction[] }).lossFunctions[0]!;
  byName.set(canonical, fn);
  return fn;
}

/** The members of a compiled layers model that define its training loss. */
interface CompiledCore {
  lossFunctions?: LossFunction[];
  calculateLosses(): tf.Tensor[];
}

/** The model that holds the compiled loss: a Sequential model keeps it in its inner functional model. */
function compiledCore(model: tf.LayersModel): CompiledCore {
  const inner = model instanceof tf.Sequential ? (model as unknown as { model?: tf.LayersModel }).model : undefined;
  return (inner ?? model) as unknown as CompiledCore;
}

/** The outputs and the loss of one forward pass of a training model. */
export interface ForwardWithLoss {
  outputs: tf.Tensor[];
  loss: tf.Tensor;
}

/** Runs `fn`, the part of the loss computed after the model (lets a tracer mark it). */
export type LossScope = <T>(fn: () => T) => T;

/**
 * Runs a training model forward on all its inputs (model inputs, then
 * targets) and computes the loss; `lossScope` wraps the loss computed after
 * the model.
 */
export function forwardWithLoss(model: WrappableModel, loss: LossSpec | undefined, inputs: tf.Tensor[], lossScope: LossScope = (fn) => fn()): ForwardWithLoss {
  const compiledModel = isLayersModel(model) ? compiledCore(model) : undefined;
  const compiled = compiledModel?.lossFunctions;
  const lossFunctions: LossFunction[] | undefined = loss !== undefined ? [typeof loss === 'string' ? lossByName(loss) : loss] : compiled;
  if (!lossFunctions) return ownLoss(model, inputs);

  const count = modelInputCount(model) ?? inputs.length - 1;
  if (count >= inputs.length || count < 0) {
    throw new PoptfjsError(`the training model '${modelName(model)}' takes ${count} input(s) and then one target per output, but got ${inputs.length} tensor(s) in all`, {
      type: 'trace',
    });
  }
  const outputs = flattenOutputs(callModel(model, inputs.slice(0, count), true), `model '${modelName(model)}'`);
  const targets = inputs.slice(count);
  if (targets.length !== outputs.length) {
    throw new PoptfjsError(
      `model '${modelName(model)}' has ${outputs.length} output(s) but got ${targets.length} target(s); pass one target per output after the ${count} model input(s)`,
      { type: 'trace' },
    );
  }
  const lossValue = lossScope(() => {
    let total: tf.Tensor | undefined;
    outputs.forEach((out, i) => {
      const fn = lossFunctions[i] ?? lossFunctions[0]!;
      const l = fn(targets[i]!, out);
      total = total ? tf.add(total, l) : l;
    });
    let value = tf.mean(total!);
    if (compiledModel) {
      for (const r of compiledModel.calculateLosses()) value = tf.add(value, r);
    }
    return value;
  });
  return { outputs, loss: lossValue };
}

/** Where a model's flattened outputs return its final loss (the last time, if more than once), or -1: that return is the loss, not an output. */
export function returnedLossIndex(outputs: readonly tf.Tensor[], loss: tf.Tensor): number {
  return outputs.lastIndexOf(loss);
}

/**
 * The forward pass of a model that computes its own loss with
 * `ops.identityLoss`: the loss is the one final marked loss (intermediate ones
 * are plain reductions), and the outputs are what the model returns, less its
 * last return of that loss.
 */
function ownLoss(model: WrappableModel, inputs: tf.Tensor[]): ForwardWithLoss {
  const { result, finalLosses } = collectLosses(() => callModel(model, inputs, true));
  const all = flattenOutputs(result, `model '${modelName(model)}'`);
  if (finalLosses.length !== 1) {
    throw new PoptfjsError(
      finalLosses.length === 0
        ? `trainingModel: model '${modelName(model)}' has no loss. Pass { loss } (a tfjs loss name or a function (yTrue, yPred)), ` +
            'compile the layers model with a loss, or return [output, ops.identityLoss(loss, "mean")] from the model'
        : `trainingModel: model '${modelName(model)}' has ${finalLosses.length} independent losses made by ops.identityLoss; a model must have one final loss: ` +
            'wrap the final loss in ops.identityLoss (e.g. ops.identityLoss(tf.add(loss1, loss2), "sum"))',
      { type: 'trace' },
    );
  }
  const loss = finalLosses[0]!;
  const returned = returnedLossIndex(all, loss);
  return { outputs: returned < 0 ? all : [...all.slice(0, returned), ...all.slice(returned + 1)], loss };
}
