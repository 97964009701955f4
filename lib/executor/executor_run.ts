/**
 * An executor's run: a call compiles on first use, checks its inputs against
 * the compiled signature, attaches to the device if needed, brings the device
 * weights up to date and runs one step of `deviceIterations × replicas ×
 * gradientAccumulation` micro-batches on the engine; and the optimizer the
 * next step trains with.
 */
import type * as tf from '@tensorflow/tfjs';
import { withLogFile } from '../common/log.js';
import { OutOfMemoryError } from '../ipu/out_of_memory_error.js';
import type { OptionsSettings } from '../options/options_settings.js';
import type { Optimizer } from '../../optim/optimizer.js';
import type { Engine } from '../engine/engine.js';
import type { NestedTensors } from '../trace/nested_values.js';
import { executorLogFile } from './log_file.js';
import { callOutput, compiledArguments } from './nested_arguments.js';
import { checkCallInputs } from './call_inputs_check.js';
import { checkReplacementOptimizer, replacementOptimizer, switchOptimizer, unknownAttributeCheck } from './executor_optimizer.js';
import { attachToDevice, ensureCompiled } from './executor_lifecycle.js';
import type { ExecutorState } from './executor_state.js';

/** Runs the model on a host batch: inference returns the outputs, training `[output, loss]`. */
export async function runExecutor(state: ExecutorState, inputs: NestedTensors[]): Promise<NestedTensors | [NestedTensors, tf.Tensor]> {
  const settings = state.options.settings;
  return withLogFile(executorLogFile(settings), () => runLogged(state, inputs, settings));
}

async function runLogged(state: ExecutorState, args: NestedTensors[], settings: OptionsSettings): Promise<NestedTensors | [NestedTensors, tf.Tensor]> {
  const compiled = await ensureCompiled(state, args);
  const inputs = compiledArguments(args, compiled.executable);
  checkCallInputs(compiled.executable, inputs);
  const binding = state.binding!;
  if (binding.needsAttach(settings.connectionType)) attachToDevice(state);
  binding.readyToRun(settings.connectionType);
  if (!compiled.executable.hardware.memory.fits)
    throw new OutOfMemoryError(compiled.executable.hardware.memory, compiled.executable.microBatchSize, compiled.executable.modelName);
  state.weights.sync(compiled);
  await state.instances.beforeStep(compiled.engine, state.training);
  let result: ReturnType<Engine['runStep']>;
  try {
    result = compiled.engine.runStep(inputs);
  } catch (error) {
    state.instances.stepFailed(error, binding.device);
    throw error;
  }
  state.anchored.replace(result.anchors);
  state.calls++;
  if (state.training) state.weights.trained(compiled.variables);
  const output = callOutput(compiled.executable, result.outputs);
  return state.training ? [output, result.loss!] : output;
}

/** Makes `given` the optimizer of the next call, without recompiling (after compilation only variable attributes may change). */
export function setExecutorOptimizer(state: ExecutorState, given: Optimizer | tf.Optimizer): void {
  state.assertUsable('setOptimizer');
  const optimizer = state.training ? replacementOptimizer(given, state.optimizer, state.model) : (given as Optimizer);
  checkReplacementOptimizer(state.training, optimizer, unknownAttributeCheck(state.options.settings), state.compiledOptimizer);
  const previous = state.optimizer;
  state.optimizer = optimizer;
  switchOptimizer(state.compiled?.engine, previous, optimizer);
}
