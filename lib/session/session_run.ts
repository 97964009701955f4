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
import { hostTensor } from '../engine/host_tensors.js';
import { sizeOf } from '../ir/graph.js';
import { anchorValues, hostArrayOf, type StepFactors } from './anchor_arrays.js';
import type { DataFlow } from './data_flow.js';
import type { SessionDevice } from './session_device.js';
import { checkBuffer, stepInputs, writeAnchor } from './step_buffers.js';
import { StepIO, type HostArray } from './step_io.js';
import { StepIOCallback } from './step_io_callback.js';

/** What a step runs. */
export interface SessionStep {
  readonly device: SessionDevice;
  readonly executable: Executable;
  readonly imported: ImportedModel;
  readonly dataFlow: DataFlow;
  readonly factors: StepFactors;
}

/** Checks the step can run now, and makes the device ready. */
function readyToRun(step: SessionStep): void {
  const { device, executable } = step;
  device.checkCanRun('run');
  if (device.weightsLost) throw new PopartRuntimeError('run: the device lost its weights in a fault; call weightsFromHost() before running again');
  if (!executable.hardware.memory.fits) throw new OutOfMemoryError(executable.hardware.memory, executable.microBatchSize, executable.modelName);
  device.readyToRun();
}

/** Runs one step with the inputs and anchor buffers of `stepio`, or through the callbacks of a `StepIOCallback`. */
export function runStep(step: SessionStep, stepio: StepIO | StepIOCallback, debugName?: string): void {
  if (stepio instanceof StepIOCallback) {
    runStepWithCallbacks(step, stepio, debugName);
    return;
  }
  const { device, imported, dataFlow, factors } = step;
  if (!(stepio instanceof StepIO)) throw new PopartException('run: expected a StepIO or a StepIOCallback, e.g. new StepIO(inputs, session.initAnchorArrays())');
  readyToRun(step);
  const inputs = stepInputs(stepio, imported.inputNames, imported.tensorInfo, factors);
  let result: ReturnType<SessionDevice['run']>;
  try {
    result = device.run(inputs, debugName);
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

/**
 * Runs one step through the engine's streams: each input stream is
 * connected to the callbacks (one micro-batch a transfer), and each
 * anchor's output stream to a collector whose values, once the step is
 * done, go to `outputCb` one returned value at a time, as the anchor's
 * return type returns them.
 */
function runStepWithCallbacks(step: SessionStep, io: StepIOCallback, debugName?: string): void {
  const { device, executable, imported, dataFlow, factors } = step;
  readyToRun(step);
  const { engine } = device;
  imported.inputNames.forEach((name, i) => {
    const { shape, dtype } = imported.tensorInfo.get(name)!;
    engine.connectStreamToCallback(`input${i}`, (buffer) => {
      const data = io.inputCb(name, false);
      checkBuffer(data, dtype, buffer.length, true, `inputCb('${name}')`, shape);
      buffer.set(data);
      io.inputCompleteCb(name);
    });
  });
  const anchors = dataFlow.anchors();
  const collected = anchors.map((): HostArray[] => []);
  anchors.forEach((_, i) => engine.connectStreamToCallback(`output${i}`, (buffer) => collected[i]!.push(buffer.slice())));
  // The loss goes to the host only as an anchor, when one is asked for.
  if (executable.kind === 'training') engine.connectStreamToCallback('loss', () => undefined);
  device.runOnStreams(debugName);
  anchors.forEach((name, i) => {
    const { shape, dtype } = imported.tensorInfo.get(name)!;
    const parts = collected[i]!;
    const flat = hostArrayOf(
      dtype,
      parts.reduce((n, p) => n + p.length, 0),
    );
    let offset = 0;
    for (const part of parts) {
      flat.set(part, offset);
      offset += part.length;
    }
    const all = hostTensor(flat, [flat.length], dtype);
    const values = anchorValues(dataFlow.art(name), factors, shape, all);
    all.dispose();
    try {
      const data = values.dataSync() as HostArray;
      const size = sizeOf(shape);
      for (let k = 0; k * size < data.length; k++) {
        const buffer = io.outputCb(name);
        checkBuffer(buffer, dtype, size, true, `outputCb('${name}')`, shape);
        buffer.set(data.subarray(k * size, (k + 1) * size));
        io.outputCompleteCb(name);
      }
    } finally {
      values.dispose();
    }
  });
}
