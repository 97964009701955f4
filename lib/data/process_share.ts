/**
 * Which samples of a dataset one process of a multi-process run reads, as
 * PopTorch's `_SubDataset` splits a dataset: each process takes one
 * consecutive block of the samples (of their shuffled order, when
 * shuffling), all of process 0's, then all of process 1's, and so on.
 *
 * - Dropping the remainder (`dropLast`), every process gets the same number
 *   of whole combined batches: `combinedBatchSize × ⌊samples /
 *   (combinedBatchSize × processes)⌋` samples each, from `processId ×` that;
 *   the samples after the last block are not read.
 * - Keeping it, the samples are shared as evenly as they divide (the first
 *   `samples mod processes` processes take one more), and each process's
 *   last batch may be short.
 */

/** This process's block of samples: where it starts and how many it has. */
export interface ProcessShare {
  readonly offset: number;
  readonly length: number;
}

/**
 * The block of process `processId` of `numProcesses` over `samples`
 * samples read in batches of `combinedBatchSize`.
 */
export function processShare(samples: number, combinedBatchSize: number, processId: number, numProcesses: number, dropLast: boolean): ProcessShare {
  if (dropLast) {
    const perProcess = combinedBatchSize * Math.floor(samples / (combinedBatchSize * numProcesses));
    return { offset: processId * perProcess, length: perProcess };
  }
  const sizeOf = (p: number) => Math.floor(samples / numProcesses) + (p < samples % numProcesses ? 1 : 0);
  let offset = 0;
  for (let p = 0; p < processId; p++) offset += sizeOf(p);
  return { offset, length: sizeOf(processId) };
}
