import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { Options, PoptfjsError, ShardedExecution, inferenceModel, ops, trainingModel } from 'poptfjs';

const double = (x: tf.Tensor) => tf.mul(x, 2);

/** Options with `Training.gradientAccumulation(n)`. */
function accumulating(n: number, options = new Options()): Options {
  options.Training.gradientAccumulation(n);
  return options;
}

// PopTorch's message (tests/batching_test.py, test_gradient_accumulation_inference), raised when the model is wrapped.
const MESSAGE = 'inferenceModel: Options.Training.gradientAccumulation is 2; you must set it to 1 or leave it as its default value (1) when running an inferenceModel().';
const PIPELINE_ADVICE = ' Use Options.deviceIterations() to process a sufficient number of batches each run for pipelined execution instead.';

describe('gradientAccumulation on an inference model', () => {
  it('is refused when the model is wrapped, with PopTorch advice for the (default) pipelined strategy', () => {
    let thrown: unknown;
    try {
      inferenceModel(double, { options: accumulating(2) });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(PoptfjsError);
    expect((thrown as PoptfjsError).message).toBe(MESSAGE + PIPELINE_ADVICE);
  });

  it('is refused without the pipeline advice under ShardedExecution', () => {
    const options = accumulating(2, new Options().setExecutionStrategy(ShardedExecution()));
    expect(() => inferenceModel(double, { options })).toThrow(new PoptfjsError(MESSAGE, { type: 'executor' }));
  });

  it('is accepted at 1, set explicitly', async () => {
    const executor = inferenceModel(double, { options: accumulating(1) });
    expect(Array.from(((await executor(tf.tensor1d([3]))) as tf.Tensor).dataSync())).toEqual([6]);
  });

  it("is dropped from the options an inference model takes from a training executor; the training executor's stay", () => {
    const w = tf.variable(tf.ones([1]), true, 'inference_accumulation_w');
    const model = (x: tf.Tensor) => ops.identityLoss(tf.sum(tf.mul(x, w)), 'sum');
    const training = trainingModel(model, { options: accumulating(4, new Options().deviceIterations(2)) });
    const inference = inferenceModel(training);
    expect(inference.options.settings.training.gradientAccumulation).toBe(1);
    expect(inference.options.settings.deviceIterations).toBe(2);
    expect(training.options.settings.training.gradientAccumulation).toBe(4);
    expect(() => inferenceModel(training, { options: training.options })).toThrow(/gradientAccumulation is 4; you must set it to 1/);
    training.destroy();
  });
});
