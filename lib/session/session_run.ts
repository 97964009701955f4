/**
 * Running one step of a session on its device: the inputs are read from the
 * `StepIO`, `batchesPerStep × accumulationFactor × replicationFactor`
 * micro-batches run, and each anchor's values are written into its buffer
 * as its return type says.
 */
import * as tf from '@tensorflow/tfjs';
import { PopartException, PopartRuntimeError } from '../common/errors.js';
import { OutOfMemoryError } from '../ipu/out_of_memory_error.js';
import type { ImportedModel } from '../onnx/model_import.js';
import type { Executable } from '../executable/executable.js';
import type { CallResult } from '../runtime/loaded_executable.js';
import { anchorValues, type StepFactors } from './anchor_arrays.js';
import type { DataFlow } from './data_flow.js';
import type { SessionDevice } from './session_device.js';
import { stepInputs, writeAnchor } from './step_buffers.js';
import { StepIO } from './step_io.js';

/** What a step runs. */
export interface SessionStep {
  readonly device: SessionDevice;
  readonly executable: Executable;
  readonly imported: ImportedModel;
  readonly dataFlow: DataFlow;
  readonly factors: StepFactors;
}

/** Runs one step with the inputs and anchor buffers of `stepio`. */
export function runStep(step: SessionStep, stepio: StepIO): void {
  const { device, executable, imported, dataFlow, factors } = step;
  if (!(stepio instanceof StepIO)) throw new PopartException('run: expected a StepIO, e.g. new StepIO(inputs, session.initAnchorArrays())');
  device.checkCanRun('run');
  if (device.weightsLost) throw new PopartRuntimeError('run: the device lost its weights in a fault; call weightsFromHost() before running again');
  if (!executable.hardware.memory.fits) throw new OutOfMemoryError(executable.hardware.memory, executable.microBatchSize, executable.modelName);
  device.readyToRun();
  const inputs = stepInputs(stepio, imported.inputNames, imported.tensorInfo, factors);
  let result: CallResult;
  try {
    result = device.run(inputs);
  } finally {
    tf.dispose(inputs);
  }
  try {
    dataFlow.anchors().forEach((name, i) => {
      const values = anchorValues(dataFlow.art(name), factors, imported.tensorInfo.get(name)!.shape, result.outputs[i]!);
      try {
        writeAnchor(stepio, name, values);
      } finally {
        values.dispose();
      }
    });
  } finally {
    tf.dispose([...result.outputs, ...(result.loss ? [result.loss] : [])]);
  }
}
