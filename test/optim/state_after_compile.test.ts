/**
 * The optimizer state exists right after `compile()`, before the first step,
 * as PopTorch's `optimizer.state_dict()` is readable once the model is
 * compiled: step 0 and every state slot with its parameter's shape at its
 * start value (zeros for momenta and moments, ones for the square average of
 * RMSprop's TensorFlow variant). The first step then moves it.
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { optim, trainingModel } from 'poptfjs';
import { variableOf } from '../helpers.js';

function regressor(): tf.Sequential {
  return tf.sequential({
    layers: [
      tf.layers.dense({ units: 4, inputShape: [3], activation: 'tanh', kernelInitializer: tf.initializers.glorotUniform({ seed: 21 }) }),
      tf.layers.dense({ units: 2, kernelInitializer: tf.initializers.glorotUniform({ seed: 22 }) }),
    ],
  });
}

const x = tf.randomNormal([4, 3], 0, 1, 'float32', 23);
const y = tf.randomNormal([4, 2], 0, 1, 'float32', 24);

type Case = [string, (m: tf.LayersModel) => optim.Optimizer, Record<string, number>];

const CASES: Case[] = [
  ['SGD with momentum', (m) => new optim.SGD(m, { lr: 0.1, momentum: 0.9 }), { momentumBuffer: 0 }],
  ['SGD, combined variant', (m) => new optim.SGD(m, { lr: 0.1, momentum: 0.9, useCombinedAccum: true, velocityScaling: 8 }), { scaledVelocity: 0 }],
  ['Adam', (m) => new optim.Adam(m, { lr: 0.01 }), { expAvg: 0, expAvgSq: 0 }],
  ['AdamW', (m) => new optim.AdamW(m, { lr: 0.01 }), { expAvg: 0, expAvgSq: 0 }],
  ['LAMB', (m) => new optim.LAMB(m, { lr: 0.01 }), { expAvg: 0, expAvgSq: 0 }],
  ['RMSprop, centered with momentum', (m) => new optim.RMSprop(m, { lr: 0.01, centered: true, momentum: 0.5 }), { squareAvg: 0, gradAvg: 0, momentumBuffer: 0 }],
  ['RMSprop, TensorFlow variant', (m) => new optim.RMSprop(m, { lr: 0.01, useTfVariant: true }), { squareAvg: 1 }],
];

describe('optimizer state right after compile()', () => {
  for (const [name, make, starts] of CASES) {
    it(`${name}: step 0, every slot with its parameter's shape at ${JSON.stringify(starts)}, moved by the first step`, async () => {
      const model = regressor();
      const opt = make(model);
      expect(opt.stateDict().states).toEqual({});
      const executor = trainingModel(model, { loss: 'meanSquaredError', optimizer: opt });
      await executor.compile(x, y);
      const before = opt.stateDict();
      expect(Object.keys(before.states)).toEqual(['']);
      const state = before.states['']!;
      expect(state.step).toBe(0);
      const weights = model.trainableWeights.map(variableOf);
      expect(Object.keys(state.slots).sort()).toEqual(weights.map((w) => w.name).sort());
      for (const w of weights) {
        const slots = state.slots[w.name]!;
        expect(Object.keys(slots).sort()).toEqual(Object.keys(starts).sort());
        for (const [slot, start] of Object.entries(starts)) {
          expect(slots[slot]!.shape).toEqual(w.shape);
          expect(Array.from(slots[slot]!.data)).toEqual(new Array(w.size).fill(start));
        }
      }
      tf.dispose(await executor.run(x, y));
      const after = opt.stateDict().states['']!;
      expect(after.step).toBe(1);
      const kernel = weights[0]!.name;
      for (const slot of Object.keys(starts)) expect(Array.from(after.slots[kernel]![slot]!.data)).not.toEqual(Array.from(state.slots[kernel]![slot]!.data));
      executor.destroy();
    });
  }

  it('SGD without momentum keeps no slots: each parameter is listed with none', async () => {
    const model = regressor();
    const opt = new optim.SGD(model, { lr: 0.1 });
    const executor = trainingModel(model, { loss: 'meanSquaredError', optimizer: opt });
    await executor.compile(x, y);
    const state = opt.stateDict().states['']!;
    expect(state.step).toBe(0);
    expect(Object.values(state.slots)).toEqual(new Array(model.trainableWeights.length).fill({}));
    executor.destroy();
  });

  it('a state dict loaded before compiling replaces the initial state', async () => {
    const model = regressor();
    const opt = new optim.Adam(model, { lr: 0.01 });
    const first = trainingModel(model, { loss: 'meanSquaredError', optimizer: opt });
    tf.dispose(await first.run(x, y));
    const trained = opt.stateDict();
    first.destroy();
    const resumed = new optim.Adam(model, { lr: 0.01 });
    resumed.loadStateDict(trained);
    const second = trainingModel(model, { loss: 'meanSquaredError', optimizer: resumed });
    await second.compile(x, y);
    expect(resumed.stateDict().states['']).toEqual(trained.states['']);
    second.destroy();
  });
});
