/**
 * The inputs of a call against the signature the model was compiled for:
 * their count, dtypes and shapes (a full host batch when a call is split into
 * micro-batches), and how a signature reads in messages.
 */
import type * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../common/errors.js';
import { batchFormula, hostBatchSize, microBatchesPerCall } from '../executable/batch_plan.js';
import type { Executable, TensorSignature } from '../executable/executable.js';
import { inputNames } from './nested_arguments.js';

/** A signature as messages show it: `input 0: float32[4,2], input 1: ...`. */
export function describeSignature(sig: readonly TensorSignature[]): string {
  return sig.map((s, i) => `input ${i}: ${s.dtype}[${s.shape.join(',')}]`).join(', ');
}

/** Checks that the flat `inputs` of a call match the count, dtypes and shapes `executable` was compiled for. */
export function checkCallInputs(executable: Executable, inputs: readonly tf.Tensor[]): void {
  const { inputSignature, factors, microBatchSize: micro } = executable;
  if (inputs.length !== inputSignature.length) {
    throw new PoptfjsError(`expected ${inputSignature.length} input tensor(s) as at compile (${describeSignature(inputSignature)}), got ${inputs.length}`, { type: 'input' });
  }
  const split = microBatchesPerCall(factors) > 1;
  const name = (i: number) => inputNames(executable)[i];
  inputs.forEach((x, i) => {
    const sig = inputSignature[i]!;
    const expected = split ? [hostBatchSize(factors, micro), ...sig.shape.slice(1)] : [...sig.shape];
    if (x.dtype !== sig.dtype) {
      throw new PoptfjsError(`${name(i)} has dtype ${x.dtype}, but the model was compiled for ${sig.dtype}`, { type: 'input' });
    }
    if (x.shape.length !== expected.length || x.shape.some((d, k) => d !== expected[k])) {
      const arithmetic = split ? ` (host batch ${expected[0]} = ${batchFormula(factors, micro)})` : '';
      throw new PoptfjsError(`${name(i)} has shape [${x.shape.join(',')}], but the model was compiled for [${expected.join(',')}]${arithmetic}`, { type: 'input' });
    }
  });
}
