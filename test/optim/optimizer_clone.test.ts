/**
 * `optimizer.clone()`: PopTorch's `copy.copy(optimizer)`, trained on with by
 * `setOptimizer` (tests/optimizers_test.py, test_velocity_scaling_copy).
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { optim, trainingModel } from 'poptfjs';

function regressor(): tf.Sequential {
  return tf.sequential({
    layers: [
      tf.layers.dense({ units: 4, inputShape: [3], activation: 'tanh', kernelInitializer: tf.initializers.glorotUniform({ seed: 21 }) }),
      tf.layers.dense({ units: 2, kernelInitializer: tf.initializers.glorotUniform({ seed: 22 }) }),
    ],
  });
}

const x = tf.randomNormal([4, 3], 0, 1, 'float32', 31);
const y = tf.randomNormal([4, 2], 0, 1, 'float32', 32);

/** Trains `steps` steps, switching to `opt.clone()` after the first when `copy` is set; the final weights. */
async function train(useCombinedAccum: boolean, copy: boolean): Promise<Float32Array[]> {
  const model = regressor();
  const opt = new optim.SGD(model, { lr: 0.05, momentum: 0.9, lossScaling: 0.05, useCombinedAccum, ...(useCombinedAccum ? { velocityScaling: 128.1 } : {}) });
  const executor = trainingModel(model, { loss: 'meanSquaredError', optimizer: opt });
  tf.dispose(await executor.run(x, y));
  if (copy) executor.setOptimizer(opt.clone());
  for (let step = 0; step < 3; step++) tf.dispose(await executor.run(x, y));
  executor.copyWeightsToHost();
  const weights = model.getWeights().map((w) => w.dataSync() as Float32Array);
  executor.destroy();
  return weights;
}

describe('optimizer.clone()', () => {
  for (const useCombinedAccum of [true, false]) {
    it(`keeps the attributes PopTorch's copy keeps (${useCombinedAccum ? 'combined' : 'separate'} SGD): training on with the copy takes the steps the original takes`, async () => {
      const original = await train(useCombinedAccum, false);
      const copied = await train(useCombinedAccum, true);
      copied.forEach((w, i) => expect(Array.from(w)).toEqual(Array.from(original[i]!)));
    });
  }

  it('is a separate optimizer of the same type, groups, values and variable attributes', () => {
    const model = regressor();
    const opt = new optim.Adam(model, { lr: 0.01, betas: [0.8, 0.99], paramGroups: [{ params: model.layers[0]!.weights, lr: 0.1 }] });
    opt.variableAttrs.markAsVariable('eps');
    const copy = opt.clone();
    expect(copy).toBeInstanceOf(optim.Adam);
    expect(copy === opt).toBe(false);
    expect(copy.settings()).toEqual(opt.settings());
    expect(copy.variableAttrs.variableNames()).toEqual(opt.variableAttrs.variableNames());
    expect(copy.paramGroups.map((g) => g.params)).toEqual(opt.paramGroups.map((g) => g.params));
    copy.paramGroups[0]!.lr = 0.5;
    (copy.paramGroups[1]!.betas as number[])[0] = 0.5;
    copy.variableAttrs.markAsConstant('eps');
    expect(opt.paramGroups[0]!.lr).toBe(0.1);
    expect(opt.paramGroups[1]!.betas).toEqual([0.8, 0.99]);
    expect(opt.variableAttrs.isVariable('eps')).toBe(true);
  });
});
