/**
 * The example inputs a model is compiled with: one micro-batch sliced from
 * the host batch a call takes, after checking that every input has the same
 * batch dimension (or the whole host batch when a call is one micro-batch).
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../common/errors.js';
import { batchFormula, microBatchesPerCall, microBatchSize, type BatchFactors } from '../executable/batch_plan.js';
import type { Structure } from '../trace/nested_values.js';
import { tensorNames } from './nested_arguments.js';

/** One micro-batch of each input, and how it was taken from the host batch. */
export interface MicroBatchExamples {
  /** True when a call splits its host batch into several micro-batches (the examples are then new tensors, the caller's to dispose). */
  readonly split: boolean;
  /** The micro-batch size. */
  readonly micro: number;
  /** One micro-batch of each input. */
  readonly examples: tf.Tensor[];
}

/** The first micro-batch of `inputs` (a host batch, flattened from arguments of `structures`), split as `factors` say. */
export function microBatchExamples(inputs: readonly tf.Tensor[], structures: readonly Structure[], factors: BatchFactors): MicroBatchExamples {
  if (inputs.length === 0 && microBatchesPerCall(factors) > 1) {
    throw new PoptfjsError(`a model without inputs cannot be split into ${batchFormula(factors)} micro-batches`, { type: 'batching' });
  }
  const split = microBatchesPerCall(factors) > 1;
  const hostBatch = inputs[0]?.shape[0] ?? 1;
  const names = tensorNames(structures);
  if (split) {
    inputs.forEach((x, i) => {
      if (x.rank === 0 || x.shape[0] !== hostBatch) {
        throw new PoptfjsError(
          `${names[i]} has shape [${x.shape.join(',')}] but ${names[0]} has a batch dimension of ${hostBatch}; every input needs the same first (batch) dimension`,
          { type: 'input' },
        );
      }
    });
  }
  const micro = split ? microBatchSize(factors, hostBatch) : hostBatch;
  const examples = split ? inputs.map((x) => tf.slice(x, [0], [micro])) : [...inputs];
  return { split, micro, examples };
}
