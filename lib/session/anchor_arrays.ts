/**
 * The shapes of a step's host buffers and how the values of an anchor are
 * brought into its buffer, as PopART lays them out:
 *
 * - an input of shape `S`: `[batchesPerStep, accumulationFactor, replicationFactor, ...S]`;
 * - an anchor returned `All`: the same; `EveryN`: `[batchesPerStep / N, accumulationFactor, replicationFactor, ...S]`
 *   (batches N-1, 2N-1, ...); `Final`: `[replicationFactor, ...S]` (the last
 *   batch's last accumulation step); `Sum`: `[replicationFactor, ...S]` (summed
 *   over batches and accumulation steps);
 *
 * with the step factors that are 1 left out (the tensor's own dimensions are kept).
 */
import * as tf from '@tensorflow/tfjs';
import type { AnchorReturnTypeSpec } from './anchor_return_type.js';
import type { HostArray } from './step_io.js';

/** The factors a step repeats the graph over. */
export interface StepFactors {
  readonly batchesPerStep: number;
  /** Micro-batches per weight update (1 for inference). */
  readonly accumulationFactor: number;
  readonly replicationFactor: number;
}

/** Micro-batches one step runs, each with its own inputs and anchor values. */
export function microBatchesPerStep(f: StepFactors): number {
  return f.batchesPerStep * f.accumulationFactor * f.replicationFactor;
}

function withFactors(factors: readonly number[], shape: readonly number[]): number[] {
  return [...factors.filter((d) => d !== 1), ...shape];
}

/** The buffer shape of an input of shape `shape`. */
export function inputArrayShape(f: StepFactors, shape: readonly number[]): number[] {
  return withFactors([f.batchesPerStep, f.accumulationFactor, f.replicationFactor], shape);
}

/** The buffer shape of an anchor of shape `shape` returned as `art` says. */
export function anchorArrayShape(art: AnchorReturnTypeSpec, f: StepFactors, shape: readonly number[]): number[] {
  switch (art.id) {
    case 'All':
      return withFactors([f.batchesPerStep, f.accumulationFactor, f.replicationFactor], shape);
    case 'EveryN':
      return withFactors([f.batchesPerStep / art.period, f.accumulationFactor, f.replicationFactor], shape);
    case 'Final':
    case 'Sum':
      return withFactors([f.replicationFactor], shape);
  }
}

/** An empty buffer for `size` values of `dtype`. */
export function hostArrayOf(dtype: tf.DataType, size: number): HostArray {
  switch (dtype) {
    case 'float32':
      return new Float32Array(size);
    case 'int32':
      return new Int32Array(size);
    case 'bool':
      return new Uint8Array(size);
    default:
      throw new RangeError(`tensors of dtype ${dtype} have no host buffer`);
  }
}

/** The name of the typed array that holds `dtype`. */
export function hostArrayName(dtype: tf.DataType): string {
  return hostArrayOf(dtype, 0).constructor.name;
}

/**
 * The values of an anchor for its buffer, from its value at every
 * micro-batch of the step (`values`: the micro-batches' values in
 * `[batch, accumulation step, replica]` order, concatenated along the first
 * dimension, or stacked for scalars). The caller owns the result.
 */
export function anchorValues(art: AnchorReturnTypeSpec, f: StepFactors, shape: readonly number[], values: tf.Tensor): tf.Tensor {
  return tf.tidy(() => {
    const full = tf.reshape(values, [f.batchesPerStep, f.accumulationFactor, f.replicationFactor, ...shape]);
    let result: tf.Tensor;
    switch (art.id) {
      case 'All':
        result = full;
        break;
      case 'EveryN': {
        const batches = Array.from({ length: f.batchesPerStep / art.period }, (_, i) => (i + 1) * art.period - 1);
        result = tf.gather(full, tf.tensor1d(batches, 'int32'), 0);
        break;
      }
      case 'Final':
        result = tf.slice(full, [f.batchesPerStep - 1, f.accumulationFactor - 1], [1, 1]);
        break;
      case 'Sum':
        result = tf.sum(full, [0, 1]);
        break;
    }
    return tf.reshape(result, anchorArrayShape(art, f, shape));
  });
}
