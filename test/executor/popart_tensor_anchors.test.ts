/**
 * The tensors PopART names in a training step, anchored by those names:
 * `UpdatedVar___<weight>` (the weight after the update) and `finalLossScale`
 * (the loss scale the step used). Written from PopTorch's
 * tests/debug_tensors_test.py (test_tensor_values: `UpdatedVar___fc2.weight`
 * has the weight's shape and changes from one step to the next;
 * test_tensor_names: the names list them) and tests/options_test.py
 * (test_automatic_loss_scaling: `finalLossScale` anchored with
 * OutputMode.Final is the loss scale the step started from).
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { Options, OutputMode, PoptfjsError, inferenceModel, optim, trainingModel } from 'poptfjs';
import { expectClose } from '../helpers.js';

function model(name: string): tf.Sequential {
  return tf.sequential({
    layers: [
      tf.layers.dense({ units: 4, inputShape: [3], activation: 'tanh', name: `${name}_fc1`, kernelInitializer: tf.initializers.glorotUniform({ seed: 21 }) }),
      tf.layers.dense({ units: 2, name: `${name}_fc2`, kernelInitializer: tf.initializers.glorotUniform({ seed: 22 }) }),
    ],
  });
}

const x = tf.randomNormal([4, 3], 0, 1, 'float32', 23);
const y = tf.randomNormal([4, 2], 0, 1, 'float32', 24);

describe("PopART's tensor names as anchors", () => {
  it('UpdatedVar___<weight> is the weight after each step: new at each step, equal to the trained weight (test_tensor_values)', async () => {
    const m = model('updated');
    const kernel = m.layers[1]!.weights[0]!;
    const opts = new Options().anchorTensor('grad_bias', `Gradient___${m.layers[1]!.weights[1]!.name}`).anchorTensor('update_weight', `UpdatedVar___${kernel.name}`);
    const executor = trainingModel(m, { options: opts, loss: 'meanSquaredError', optimizer: new optim.SGD(m, { lr: 0.1 }) });
    tf.dispose(await executor(x, y));
    const update1 = executor.getAnchoredTensor('update_weight');
    expect(update1.shape).toEqual([4, 2]);
    expect(executor.getAnchoredTensor('grad_bias').shape).toEqual([2]);
    expectClose(update1, kernel.read());
    tf.dispose(await executor(x, y));
    const update2 = executor.getAnchoredTensor('update_weight');
    expect(Array.from(update2.dataSync())).not.toEqual(Array.from(update1.dataSync()));
    expectClose(update2, kernel.read());
    expect(executor.getTensorNames()).toEqual(expect.arrayContaining([`UpdatedVar___${kernel.name}`, 'finalLossScale']));
    executor.destroy();
  });

  it('UpdatedVar___<weight> with OutputMode.All returns the weight after each device iteration', async () => {
    const m = model('updated_all');
    const kernel = m.layers[1]!.weights[0]!;
    const steps = new Options().deviceIterations(2).anchorTensor('w', `UpdatedVar___${kernel.name}`, OutputMode.All);
    const executor = trainingModel(m, { options: steps, loss: 'meanSquaredError', optimizer: new optim.SGD(m, { lr: 0.1 }) });
    // The same two steps one at a time on a copy of the model, as the reference.
    const reference = model('updated_ref');
    reference.setWeights(m.getWeights());
    const single = trainingModel(reference, { loss: 'meanSquaredError', optimizer: new optim.SGD(reference, { lr: 0.1 }) });
    tf.dispose(await executor(tf.concat([x, x]), tf.concat([y, y])));
    tf.dispose(await single(x, y));
    const afterFirst = reference.layers[1]!.getWeights()[0]!.clone();
    tf.dispose(await single(x, y));
    expectClose(executor.getAnchoredTensor('w'), tf.concat([afterFirst, reference.layers[1]!.getWeights()[0]!]), 1e-5, 1e-6);
    executor.destroy();
    single.destroy();
  });

  it('finalLossScale (OutputMode.Final) is the loss scale each step used as automatic loss scaling grows it (test_automatic_loss_scaling)', async () => {
    const m = model('final_scale');
    const opts = new Options().anchorTensor('ls_final', 'finalLossScale', OutputMode.Final);
    opts.Training.setAutomaticLossScaling(true);
    const executor = trainingModel(m, { options: opts, loss: 'meanSquaredError', optimizer: new optim.Adam(m, { lr: 0, lossScaling: 32 }) });
    await executor.compile(x, y);
    const used: number[] = [];
    for (let i = 0; i < 4; i++) {
      const before = executor.currentLossScale();
      tf.dispose(await executor(x, y));
      used.push(executor.getAnchoredTensor('ls_final').dataSync()[0]!);
      expect(used[i]).toBe(before);
    }
    expect(used).toEqual([32, 64, 128, 256]);
    executor.destroy();
  });

  it('an inference graph has neither: the names are refused at compile', async () => {
    const executor = inferenceModel(model('inference_names'), { options: new Options().anchorTensor('ls', 'finalLossScale') });
    const error = await executor.compile(x).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PoptfjsError);
    expect((error as Error).message).toContain("Options.anchorTensor('ls', 'finalLossScale'): the compiled graph has no tensor 'finalLossScale'");
    executor.destroy();
  });
});
