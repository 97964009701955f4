/**
 * Gradient accumulation belongs to training: as PopTorch does, wrapping a
 * model for inference with `Options.Training.gradientAccumulation` above 1 is
 * refused when the model is wrapped, with PopTorch's advice for pipelines.
 */
import { PoptfjsError } from '../common/errors.js';
import type { Options } from '../options/options.js';

/** Throws unless the options of an inference model leave `gradientAccumulation` at 1. */
export function checkInferenceAccumulation(options: Options): void {
  const { training, executionStrategy } = options.settings;
  if (training.gradientAccumulation === 1) return;
  const pipelined =
    executionStrategy.type === 'PipelinedExecution'
      ? ' Use Options.deviceIterations() to process a sufficient number of batches each run for pipelined execution instead.'
      : '';
  throw new PoptfjsError(
    `inferenceModel: Options.Training.gradientAccumulation is ${training.gradientAccumulation}; you must set it to 1 ` +
      `or leave it as its default value (1) when running an inferenceModel().${pipelined}`,
    { type: 'executor' },
  );
}
