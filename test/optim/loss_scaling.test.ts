/**
 * Loss scaling: the loss is multiplied by the scale before the backward
 * pass and the gradients divided by it before the update, so in float32 any
 * scale trains the same, whatever the reduction of gradients over
 * accumulation steps and replicas; float16 accumulators overflow with the
 * `Post` mean reduction (the sum grows with the accumulation factor) and not
 * with `Running` (PopTorch: "the buffer value is never larger than the
 * magnitude of the largest micro batch gradient"); automatic loss scaling.
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { Options, half, optim, trainingModel } from 'poptfjs';
import { expectClose, liveTensors, variableOf } from '../helpers.js';

function regressor(seed: number): tf.Sequential {
  return tf.sequential({
    layers: [
      tf.layers.dense({ units: 4, inputShape: [3], activation: 'tanh', kernelInitializer: tf.initializers.glorotUniform({ seed }) }),
      tf.layers.dense({ units: 2, kernelInitializer: tf.initializers.glorotUniform({ seed: seed + 1 }) }),
    ],
  });
}

/** `count` micro-batch gradients of MSE on `model`, one per micro-batch of `rows` rows, by name. */
function microBatchGradients(model: tf.LayersModel, x: tf.Tensor, y: tf.Tensor, rows: number): Array<Map<string, tf.Tensor>> {
  const vars = model.trainableWeights.map(variableOf);
  return Array.from({ length: x.shape[0]! / rows }, (_, m) => {
    const grads = tf.tidy(() => {
      const xm = x.slice([m * rows], [rows]);
      const ym = y.slice([m * rows], [rows]);
      return tf.variableGrads(() => tf.mean(tf.square(tf.sub(model.apply(xm) as tf.Tensor, ym))) as tf.Scalar, vars).grads;
    });
    return new Map(vars.map((v) => [v.name, grads[v.name]!]));
  });
}

describe('loss scaling in float32', () => {
  const x = tf.randomNormal([16, 3], 0, 1, 'float32', 3);
  const y = tf.randomNormal([16, 2], 0, 1, 'float32', 4);

  for (const [reduction, strategy] of [
    ['Mean', 'Post'],
    ['Mean', 'Running'],
    ['Sum', 'Post'],
  ] as const) {
    it(`gives the same training at any scale with ${reduction}${reduction === 'Mean' ? `/${strategy}` : ''} over 4 accumulation steps and 2 replicas`, async () => {
      const train = async (lossScaling: number) => {
        const model = regressor(5);
        const opts = new Options().replicationFactor(2);
        opts.Training.gradientAccumulation(4).accumulationAndReplicationReductionType(reduction).setMeanAccumulationAndReplicationReductionStrategy(strategy);
        const executor = trainingModel(model, { loss: 'meanSquaredError', options: opts, optimizer: new optim.SGD(model, { lr: 0.05, lossScaling }) });
        await executor.run(x, y);
        executor.copyWeightsToHost();
        return model.getWeights();
      };
      // Independent reference: one SGD step on the mean (or sum) of the 8 micro-batch gradients.
      const reference = regressor(5);
      const grads = microBatchGradients(reference, x, y, 2);
      const vars = reference.trainableWeights.map(variableOf);
      for (const v of vars) {
        const total = tf.addN(grads.map((g) => g.get(v.name)!));
        v.assign(tf.sub(v, tf.mul(reduction === 'Mean' ? tf.div(total, grads.length) : total, 0.05)));
      }
      for (const scale of [1, 1024, 2 ** 20]) {
        const weights = await train(scale);
        weights.forEach((w, i) => expectClose(w, reference.getWeights()[i]!, 1e-5, 1e-6));
      }
    });
  }
});

describe('loss scaling with float16 gradient accumulators', () => {
  // One weight w, loss (w·1 - 5)²: every micro-batch gradient is 2(w - 5) = -10, -20480 once scaled by 2048.
  const x = tf.ones([8, 1]);
  const y = tf.fill([8, 1], 5);
  const train = async (strategy: 'Post' | 'Running', automaticLossScaling = false, lossScaling = 2048) => {
    const w = tf.variable(tf.zeros([1, 1]), true, `accumulator_w_${strategy}_${automaticLossScaling}_${lossScaling}`);
    const model = (input: tf.Tensor) => tf.matMul(input, w);
    const opts = new Options();
    opts.Training.gradientAccumulation(8).setMeanAccumulationAndReplicationReductionStrategy(strategy).setAutomaticLossScaling(automaticLossScaling);
    const executor = trainingModel(model, {
      loss: 'meanSquaredError',
      options: opts,
      optimizer: new optim.SGD([w], { lr: 0.01, lossScaling, accumType: 'float16' }),
    });
    await executor.run(x, y);
    executor.copyWeightsToHost();
    return { w: w.dataSync()[0]!, scale: executor.currentLossScale() };
  };

  it('keep a Running mean even when Post is set (8 × 20480 > 65504 would overflow), as PopTorch switches the strategy', async () => {
    expect((await train('Post')).w).toBeCloseTo(0.1, 6);
    expect((await train('Running')).w).toBeCloseTo(0.1, 6);
  });

  it('overflow is caught by automatic loss scaling: the update is skipped and the scale halves', async () => {
    // Scaled by 8192, each micro-batch gradient (-81920) is beyond float16's range.
    expect(await train('Running', true, 8192)).toEqual({ w: 0, scale: 4096 });
    // Running does not overflow, but its gradients (20480) are in float16's upper sixteenth: the scale halves, the update is made.
    const running = await train('Running', true);
    expect(running.scale).toBe(1024);
    expect(running.w).toBeCloseTo(0.1, 6);
  });
});

describe('automatic loss scaling', () => {
  const x = tf.randomNormal([4, 3], 0, 1, 'float32', 6);
  const y = tf.randomNormal([4, 2], 0, 1, 'float32', 7);

  it("starts from the optimizer's loss scaling, grows while gradients are far from overflowing, and trains as without it in float32", async () => {
    const train = async (automatic: boolean) => {
      const model = regressor(8);
      const opts = new Options();
      opts.Training.setAutomaticLossScaling(automatic);
      const executor = trainingModel(model, { loss: 'meanSquaredError', options: opts, optimizer: new optim.Adam(model, { lr: 0.01, lossScaling: 32 }) });
      const scales: number[] = [];
      for (let i = 0; i < 4; i++) {
        await executor.run(x, y);
        scales.push(executor.currentLossScale());
      }
      executor.copyWeightsToHost();
      return { scales, weights: model.getWeights() };
    };
    const automatic = await train(true);
    expect(automatic.scales).toEqual([64, 128, 256, 512]);
    const fixed = await train(false);
    expect(fixed.scales).toEqual([32, 32, 32, 32]);
    automatic.weights.forEach((w, i) => expectClose(w, fixed.weights[i]!, 1e-5, 1e-6));
  });

  it("keeps a float16 model's scaled gradients below float16's upper sixteenth, and leaks no tensors", async () => {
    const model = half(regressor(9));
    const opts = new Options();
    opts.Training.setAutomaticLossScaling(true);
    const executor = trainingModel(model, { loss: 'meanSquaredError', options: opts, optimizer: new optim.SGD(model, { lr: 0.01 }) });
    const xs = half(x);
    const step = async () => {
      const [out, loss] = await executor.run(xs, y);
      tf.dispose([out as tf.Tensor, loss]);
    };
    await step();
    const before = liveTensors();
    const scales: number[] = [];
    for (let i = 0; i < 30; i++) {
      await step();
      scales.push(executor.currentLossScale());
    }
    expect(liveTensors()).toBe(before);
    // The scale settles where the largest scaled gradient (about 1 here) is within a factor 2 of 65504 / 16.
    const settled = scales.slice(-10);
    expect(Math.max(...settled) / Math.min(...settled)).toBeLessThanOrEqual(2);
    expect(Math.min(...settled)).toBeGreaterThanOrEqual(256);
    expect(Math.max(...settled)).toBeLessThanOrEqual(65536);
  });
});
