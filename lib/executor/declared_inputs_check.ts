/**
 * Before an executor traces a model on inputs shaped as a file declares them
 * (`loadExecutable`, `loadCheckpoint`), the declared shapes are compared with
 * what the model takes (a layers model's input shapes) and with the memory
 * tensors may take, so that a crafted file declaring a huge input is refused
 * with its path instead of allocating gigabytes of zeros first.
 */
import { totalmem } from 'node:os';
import type * as tf from '@tensorflow/tfjs';
import { hostHeap } from '../backend/host_heap.js';
import { PoptfjsError } from '../common/errors.js';
import { formatBytes } from '../ipu/byte_size.js';
import { declaredBytes } from '../proto/declared_tensor.js';
import type { TensorSignature } from '../executable/executable.js';
import { isLayersModel, type WrappableModel } from '../trace/model_function.js';

function describe(s: TensorSignature): string {
  return `${s.dtype}[${s.shape.join(',')}]`;
}

/**
 * The memory the tensors a file declares may take: what tensors may take of
 * the backend's heap, or the machine's memory for backends without a limit;
 * with how messages name it.
 */
export function declaredTensorMemory(): { readonly bytes: number; readonly description: string } {
  const heap = hostHeap();
  const bytes = heap.limit ?? totalmem();
  return {
    bytes,
    description: heap.limit === undefined ? `this machine's ${formatBytes(bytes)} of memory` : `the ${formatBytes(bytes)} tensors may take in ${heap.description}`,
  };
}

/**
 * Throws an error naming `path` if the inputs it declares (the tensors the
 * model is about to be traced on) do not fit the model's declared inputs or
 * would take more memory than tensors may have (the backend's heap, or the
 * machine's memory for backends without a limit).
 */
export function checkDeclaredInputs(path: string, inputs: readonly TensorSignature[], model: WrappableModel): void {
  if (isLayersModel(model)) {
    model.inputs.forEach((input: tf.SymbolicTensor, i) => {
      const declared = inputs[i];
      if (declared === undefined) return;
      const fits = declared.shape.length === input.shape.length && input.shape.every((d, k) => d === null || d === declared.shape[k]);
      if (!fits) {
        throw new PoptfjsError(
          `${path} does not match the wrapped model: input ${i} is ${describe(declared)} in the file, but the model takes [${input.shape.map((d) => d ?? 'any').join(',')}]`,
          {
            type: 'file',
            location: path,
          },
        );
      }
    });
  }
  const bytes = inputs.reduce((n, s) => n + declaredBytes(s.shape, s.dtype), 0);
  const memory = declaredTensorMemory();
  if (bytes > memory.bytes) {
    throw new PoptfjsError(`${path} declares inputs ${inputs.map(describe).join(', ')}, which take ${formatBytes(bytes)}: more than ${memory.description}`, {
      type: 'file',
      location: path,
    });
  }
}
