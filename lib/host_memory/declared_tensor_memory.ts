/**
 * The memory the tensors a file declares may take, so that a crafted file
 * (an executable, a checkpoint, an ONNX model) declaring a huge tensor is
 * refused before gigabytes of it are allocated.
 */
import { totalmem } from 'node:os';
import { hostHeap } from '../backend/host_heap.js';
import { formatBytes } from '../ipu/byte_size.js';

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
