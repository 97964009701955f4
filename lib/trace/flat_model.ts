/**
 * A function model that takes and returns nested values, seen by the tracer
 * as a function of flat tensors returning a flat list of tensors: it builds
 * the model's arguments again from the flat tensors, calls the model, and
 * flattens what the model returns, recording its structure.
 */
import type * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../common/errors.js';
import { returnedLossIndex } from './loss_function.js';
import { finalLossesSoFar } from './loss_marker.js';
import { callFunction, modelName, type TensorFunction } from './model_function.js';
import { flattenAlong, structureOf, tensorCount, unflatten, withoutTensor, type Structure } from './nested_values.js';

/** The structure of what `model` returned; what it cannot hold is an error naming the model and where. */
function outputStructure(result: unknown, model: TensorFunction): Structure {
  try {
    return structureOf(result, 'output');
  } catch (error) {
    throw new PoptfjsError(`model '${modelName(model)}' returned what poptfjs cannot return: ${(error as Error).message}`, { type: 'trace', cause: error });
  }
}

/** A function model traced through flat tensors. */
export class FlatModel {
  /** The function the tracer calls: the model's name, and as many parameters as its arguments hold tensors. */
  readonly fn: TensorFunction;
  private returned: Structure | undefined;
  private lossReturnedAt = -1;

  /** `model`, called with arguments of the structures `args` (its own arguments, not a training model's targets). */
  constructor(
    private readonly model: TensorFunction,
    args: readonly Structure[],
  ) {
    const tensors = args.map(tensorCount);
    const fn = (...flat: tf.Tensor[]): tf.Tensor[] => {
      let next = 0;
      const nested = args.map((s, i) => unflatten(s, flat.slice(next, (next += tensors[i]!))));
      const result = callFunction(model, nested);
      const returned = outputStructure(result, model);
      const outputs = flattenAlong(result, returned, 'output');
      const losses = finalLossesSoFar();
      this.returned = returned;
      this.lossReturnedAt = losses?.length === 1 ? returnedLossIndex(outputs, losses[0]!) : -1;
      return outputs;
    };
    Object.defineProperty(fn, 'name', { value: modelName(model) });
    Object.defineProperty(fn, 'length', { value: tensors.reduce((a, b) => a + b, 0) });
    this.fn = fn;
  }

  /**
   * The structure of the outputs of the model's last traced call, without
   * the return of the loss a training model made with `ops.identityLoss`
   * (which the executor returns as the loss).
   */
  outputs(): Structure {
    if (!this.returned) throw new PoptfjsError(`internal: model '${modelName(this.model)}' was not traced`, { type: 'internal' });
    return this.lossReturnedAt < 0 ? this.returned : withoutTensor(this.returned, this.lossReturnedAt);
  }
}
