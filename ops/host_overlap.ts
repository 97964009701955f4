/**
 * `setOverlapForInput` / `setOverlapForOutput`: PopTorch's
 * `set_overlap_for_input` / `set_overlap_for_output` (python/ops.py), which
 * let the host transfer of a model input or output overlap compute on the
 * I/O tiles (`Options.TensorLocations.numIOTiles`).
 */
import * as tf from '@tensorflow/tfjs';
import { isOverlapMode, type OverlapMode } from '../lib/ir/host_overlap.js';
export { OverlapMode } from '../lib/ir/host_overlap.js';
import { currentRecorder, TraceError } from '../lib/trace/kernel_recorder.js';
import { describeValue, flattenAlong, structureOf, type NestedTensors } from '../lib/trace/nested_values.js';
import { argumentError } from './arguments/dynamic_offset.js';

/** The tensors of `tensors` (a tensor, or arrays and plain objects of them), with PopTorch's error for anything else. */
function tensorsOf(op: string, what: 'inputs' | 'outputs', tensors: NestedTensors, mode: unknown): tf.Tensor[] {
  if (!isOverlapMode(mode)) {
    throw argumentError(op, `mode must be an OverlapMode (NoOverlap, OverlapAccumulationLoop or OverlapDeviceIterationLoop), got ${describeValue(mode)}`);
  }
  const structure = structureOf(tensors, what);
  const leaves: unknown[] = [];
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(visit);
    else if (v !== null && typeof v === 'object' && !(v instanceof tf.Tensor)) Object.values(v).forEach(visit);
    else leaves.push(v);
  };
  visit(tensors);
  const plain = leaves.find((v) => !(v instanceof tf.Tensor));
  if (plain !== undefined || leaves.length === 0) {
    throw argumentError(op, `You may only set overlap for tensor ${what}. ${leaves.length === 0 ? 'an empty structure' : describeValue(plain)} is not supported.`);
  }
  return flattenAlong(tensors, structure, what);
}

/**
 * Marks the model inputs `inputs` (a tensor, or arrays and plain objects of
 * them) for host I/O overlapped with compute, and returns them unchanged, as
 * PopTorch's `set_overlap_for_input`. Call it first thing in the model, on
 * inputs nothing has read yet, and use what it returns.
 *
 * With `OverlapAccumulationLoop` the I/O tiles load the next
 * gradient-accumulation iteration's input while the compute tiles work on
 * this one; with `OverlapDeviceIterationLoop` they also load the next device
 * iteration's. Only the first iteration of the loop waits for its input. A
 * marked input's buffers (two micro-batches' worth, double-buffered) live on
 * the I/O tiles. `NoOverlap` (the default of an unmarked input) copies the
 * input when it is needed, through the compute tiles. A marked model needs
 * `Options.TensorLocations.numIOTiles`, an execution strategy other than
 * `PipelinedExecution`, and `OutputMode.All` or `Sum`.
 *
 * Outside a poptfjs model it returns `inputs`.
 */
export function setOverlapForInput<T extends NestedTensors>(inputs: T, mode: OverlapMode): T {
  const op = 'setOverlapForInput';
  const tensors = tensorsOf(op, 'inputs', inputs, mode);
  const recorder = currentRecorder();
  if (!recorder || mode === 'NoOverlap') return inputs;
  for (const t of tensors) {
    const value = recorder.valueFor(t);
    const source = recorder.builder.value(value).source;
    if (recorder.tracingBody || source.kind !== 'input' || source.name === 'lossScale') {
      throw new TraceError('poptorch.set_overlap_for_input applied on a node which is not a tensor input to the model.', op);
    }
    if (recorder.isRead(value)) {
      throw new TraceError(
        `poptorch.set_overlap_for_input must be the only op applied to an input. This is not the case for input ${source.index} to the model. ` +
          '(ops.setOverlapForInput: mark the input before any op reads it, and use the tensor it returns)',
        op,
      );
    }
    recorder.hostOverlapMarks.push({ of: 'input', value, mode });
  }
  return inputs;
}

/**
 * Marks the model outputs `outputs` (a tensor, or arrays and plain objects
 * of them) for host I/O overlapped with compute, and returns them unchanged,
 * as PopTorch's `set_overlap_for_output`. Call it just before the model
 * returns them; each marked tensor must be returned once (or be the loss).
 * See {@link setOverlapForInput} for the modes.
 *
 * Outside a poptfjs model it returns `outputs`.
 */
export function setOverlapForOutput<T extends NestedTensors>(outputs: T, mode: OverlapMode): T {
  const tensors = tensorsOf('setOverlapForOutput', 'outputs', outputs, mode);
  const recorder = currentRecorder();
  if (!recorder || mode === 'NoOverlap') return outputs;
  if (recorder.tracingBody) {
    throw new TraceError('poptorch.set_overlap_for_output applied on a node which is not a tensor output to the model.', 'setOverlapForOutput');
  }
  for (const t of tensors) recorder.hostOverlapMarks.push({ of: 'output', value: recorder.valueFor(t), mode });
  return outputs;
}
