/**
 * What a session's steps require of its model, checked when the session is
 * created: with several micro-batches per step every input is split along
 * the same first (micro-batch) dimension, and every anchor has a host buffer
 * type (and a boolean one is not returned as a `Sum`).
 */
import { PopartException } from '../common/errors.js';
import type { ImportedModel } from '../onnx/model_import.js';
import type { TensorSignature } from '../executable/executable.js';
import { microBatchesPerStep, type StepFactors } from './anchor_arrays.js';
import type { DataFlow } from './data_flow.js';

/** The signature of each graph input of `imported`, in order. */
export function inputSignatureOf(imported: ImportedModel): TensorSignature[] {
  return imported.inputNames.map((name) => {
    const info = imported.tensorInfo.get(name)!;
    return { shape: [...info.shape], dtype: info.dtype };
  });
}

/** With several micro-batches per step, every input needs the same micro-batch (first) dimension: it. */
export function stepMicroBatch(inputSignature: readonly TensorSignature[], imported: ImportedModel, factors: StepFactors, where: string): number {
  const steps = microBatchesPerStep(factors);
  const first = inputSignature[0]?.shape[0] ?? 1;
  if (steps === 1) return first;
  inputSignature.forEach((s, i) => {
    if (s.shape.length === 0 || s.shape[0] !== first) {
      throw new PopartException(
        `${where}: a step runs ${steps} micro-batches (batchesPerStep ${factors.batchesPerStep} × accumulationFactor ${factors.accumulationFactor} × ` +
          `replicationFactor ${factors.replicationFactor}), and poptfjs splits every input along its first (micro-batch) dimension: input ` +
          `'${imported.inputNames[i]}' has shape [${s.shape.join(', ')}] but '${imported.inputNames[0]}' has shape [${inputSignature[0]!.shape.join(', ')}]`,
      );
    }
  });
  return first;
}

/** Checks that every anchor of `dataFlow` has a host buffer type, and that a boolean one is not returned as a `Sum`. */
export function checkAnchorTypes(dataFlow: DataFlow, imported: ImportedModel, where: string): void {
  for (const name of dataFlow.anchors()) {
    const { dtype } = imported.tensorInfo.get(name)!;
    if (dtype !== 'float32' && dtype !== 'int32' && dtype !== 'bool') throw new PopartException(`${where}: anchor '${name}' is ${dtype}, which has no host buffer`);
    if (dtype === 'bool' && dataFlow.art(name).id === 'Sum') throw new PopartException(`${where}: anchor '${name}' is boolean and cannot be returned as a Sum`);
  }
}
