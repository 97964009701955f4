/**
 * Restoring a checkpoint into an executor: the inputs to compile a model for
 * when it is not compiled yet (like the checkpoint's), and the device state
 * restored after checking the checkpoint was saved from this model and its
 * optimizer (an error names the first difference).
 */
import * as tf from '@tensorflow/tfjs';
import { PoptfjsError } from '../common/errors.js';
import { getLogger } from '../common/log.js';
import type { CheckpointContents } from '../files/checkpoint_file.js';
import { describeOptimizer, optimizerConfig } from '../files/optimizer_config.js';
import { tensorFromData } from '../files/tensor_data_conversion.js';
import { hostBatchSize, microBatchesPerCall } from '../executable/batch_plan.js';
import { deviceStateTensors, mapDeviceState } from '../executable/device_state.js';
import type { WrappableModel } from '../trace/model_function.js';
import type { Optimizer } from '../../optim/optimizer.js';
import { checkDeclaredInputs } from './declared_inputs_check.js';
import type { Compiled } from './executable_install.js';
import { matchModel } from '../files/model_matching.js';

const log = getLogger('poptfjs');

/** Zero inputs like those the checkpoint at `path` was saved for (a full host batch each), to compile `model` with; the caller owns them. */
export function checkpointCompileInputs(path: string, checkpoint: CheckpointContents, model: WrappableModel): tf.Tensor[] {
  const split = microBatchesPerCall(checkpoint.factors) > 1;
  const examples = checkpoint.inputSignature.map((s) => ({
    shape: split ? [hostBatchSize(checkpoint.factors, checkpoint.microBatchSize), ...s.shape.slice(1)] : [...s.shape],
    dtype: s.dtype,
  }));
  checkDeclaredInputs(path, examples, model);
  return examples.map((s) => tf.zeros(s.shape, s.dtype));
}

/**
 * Writes the device state of `checkpoint` (read from `path`) into the
 * loaded executable of `compiled`, after checking that it was saved from the
 * same model, and from an optimizer of the same type as `optimizer` (another
 * configuration of it is kept, with a warning).
 */
export function restoreCheckpoint(path: string, checkpoint: CheckpointContents, compiled: Compiled, optimizer: Optimizer | undefined): void {
  const { executable } = compiled;
  const names = matchModel(
    path,
    { kind: checkpoint.kind, inputs: checkpoint.inputSignature, parameters: checkpoint.parameters, replicaGroupings: {} },
    { kind: executable.kind, inputs: executable.inputSignature, parameters: compiled.trace.parameters, replicaGroupings: {} },
  );
  if (checkpoint.optimizer && optimizer) {
    const mine = optimizerConfig(optimizer);
    if (mine.type !== checkpoint.optimizer.type) {
      throw new PoptfjsError(`${path} holds the state of an optim.${checkpoint.optimizer.type}, but this executor trains with an optim.${mine.type}`, {
        type: 'executor',
        location: path,
      });
    }
    const saved = describeOptimizer(checkpoint.optimizer);
    if (saved !== describeOptimizer(mine)) log.warn(`loadCheckpoint(${path}): the checkpoint was saved with ${saved}; this executor's ${describeOptimizer(mine)} is kept`);
  }
  const state = mapDeviceState(checkpoint.deviceState, tensorFromData, (n) => names.get(n) ?? n);
  try {
    compiled.engine.importState(state);
  } catch (error) {
    tf.dispose(deviceStateTensors(state));
    throw error instanceof PoptfjsError ? new PoptfjsError(`${path}: ${error.message}`, { type: 'file', location: path, cause: error }) : error;
  }
}
