/**
 * Accumulation types: optimizer state and gradient accumulators kept in
 * float16 hold float16 values and follow the float32 run within float16's
 * precision; the combined SGD tensor takes its parameter's precision.
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { Options, half, isFloat16Value, optim, trainingModel } from 'poptfjs';
import { expectClose } from '../helpers.js';

function regressor(seed: number): tf.Sequential {
  return tf.sequential({
    layers: [tf.layers.dense({ units: 3, inputShape: [4], kernelInitializer: tf.initializers.glorotUniform({ seed }) })],
  });
}

const x = tf.randomNormal([8, 4], 0, 1, 'float32', 1);
const y = tf.randomNormal([8, 3], 0, 1, 'float32', 2);

/** Every value of every slot of a state dict. */
function slotValues(sd: optim.OptimizerStateDict, slot: string): number[] {
  return Object.values(sd.states['']!.slots).flatMap((slots) => Array.from(slots[slot]!.data));
}

async function train(model: tf.LayersModel, optimizer: optim.Optimizer, steps: number, options = new Options()): Promise<void> {
  const executor = trainingModel(model, { loss: 'meanSquaredError', optimizer, options });
  for (let i = 0; i < steps; i++) await executor.run(x, y);
  executor.copyWeightsToHost();
  executor.destroy();
}

describe('accumulation types', () => {
  it("keep Adam's moments in float16 when asked, close to the float32 run", async () => {
    const half16 = regressor(3);
    const adam16 = new optim.Adam(half16, { lr: 0.01, firstOrderMomentumAccumType: 'float16', secondOrderMomentumAccumType: 'float16' });
    await train(half16, adam16, 5);
    const sd = adam16.stateDict();
    for (const slot of ['expAvg', 'expAvgSq']) expect(slotValues(sd, slot).every(isFloat16Value)).toBe(true);
    const full = regressor(3);
    const adam32 = new optim.Adam(full, { lr: 0.01 });
    await train(full, adam32, 5);
    expect(slotValues(adam32.stateDict(), 'expAvg').every(isFloat16Value)).toBe(false);
    half16.getWeights().forEach((w, i) => expectClose(w, full.getWeights()[i]!, 1e-2, 1e-3));
  });

  it('keep the gradient accumulator in float16 with accumType float16', async () => {
    const opts = new Options();
    opts.Training.gradientAccumulation(4);
    const model16 = regressor(4);
    await train(model16, new optim.SGD(model16, { lr: 0.1, accumType: 'float16' }), 3, opts);
    const model32 = regressor(4);
    await train(model32, new optim.SGD(model32, { lr: 0.1 }), 3, opts.clone());
    const difference = tf.max(tf.abs(tf.sub(model16.getWeights()[0]!, model32.getWeights()[0]!))).dataSync()[0]!;
    expect(difference).toBeGreaterThan(0);
    expect(difference).toBeLessThan(1e-3);
  });

  it('give the combined SGD tensor the precision of its parameter', async () => {
    const options = { lr: 0.05, momentum: 0.9, useCombinedAccum: true, velocityScaling: 16 };
    const model32 = regressor(5);
    const sgd32 = new optim.SGD(model32, options);
    await train(model32, sgd32, 3);
    expect(slotValues(sgd32.stateDict(), 'scaledVelocity').every(isFloat16Value)).toBe(false);
    const model16 = half(regressor(5));
    const sgd16 = new optim.SGD(model16, options);
    await train(model16, sgd16, 3);
    expect(slotValues(sgd16.stateDict(), 'scaledVelocity').every(isFloat16Value)).toBe(true);
    for (const w of model16.getWeights()) expect(Array.from(w.dataSync()).every(isFloat16Value)).toBe(true);
  });

  it('round float16 weight updates stochastically under enableStochasticRounding, reproducibly under randomSeed', async () => {
    const weightsAfter = async (stochastic: boolean, seed: number) => {
      const model = half(regressor(6));
      const opts = new Options().randomSeed(seed);
      opts.Precision.enableStochasticRounding(stochastic);
      await train(model, new optim.SGD(model, { lr: 1e-4 }), 3, opts);
      return Array.from(model.getWeights()[0]!.dataSync());
    };
    const first = await weightsAfter(true, 7);
    expect(first.every(isFloat16Value)).toBe(true);
    expect(await weightsAfter(true, 7)).toEqual(first);
    expect(await weightsAfter(true, 8)).not.toEqual(first);
    expect(await weightsAfter(false, 7)).not.toEqual(first);
  });
});
