/**
 * Optimizer state dicts: what they hold, that they survive JSON, that
 * training resumed from one continues exactly as if it had not stopped
 * (PopTorch's "Reading and writing optimizer state" flow), and the errors
 * for state dicts that do not fit.
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { CommGroupType, Options, VariableRetrievalMode, optim, trainingModel } from 'poptfjs';
import { variableOf } from '../helpers.js';

function regressor(seed: number): tf.Sequential {
  return tf.sequential({
    layers: [
      tf.layers.dense({ units: 5, inputShape: [3], activation: 'tanh', kernelInitializer: tf.initializers.glorotUniform({ seed }) }),
      tf.layers.dense({ units: 2, kernelInitializer: tf.initializers.glorotUniform({ seed: seed + 1 }) }),
    ],
  });
}

const x = tf.randomNormal([4, 3], 0, 1, 'float32', 1);
const y = tf.randomNormal([4, 2], 0, 1, 'float32', 2);

/** A state dict through JSON, typed arrays as arrays. */
function throughJson(sd: optim.OptimizerStateDict): unknown {
  return JSON.parse(JSON.stringify(sd, (_, v: unknown) => (v instanceof Float32Array ? Array.from(v) : v)));
}

async function train(executor: ReturnType<typeof trainingModel>, steps: number): Promise<void> {
  for (let i = 0; i < steps; i++) {
    const [out, loss] = await executor.run(x, y);
    tf.dispose([out as tf.Tensor, loss]);
  }
}

describe('stateDict', () => {
  it("holds the type, attributes, parameter groups, loss scale and the device's state as typed arrays", async () => {
    const model = regressor(1);
    const opt = new optim.Adam(model, { lr: 0.01, lossScaling: 4 });
    expect(opt.stateDict()).toMatchObject({ format: 'poptfjs.optimizer-state', version: 1, type: 'Adam', lossScale: 4, states: {} });
    const executor = trainingModel(model, { loss: 'meanSquaredError', optimizer: opt });
    await train(executor, 3);
    const sd = opt.stateDict();
    expect(sd.attributes).toMatchObject({ lossScaling: 4, accumType: 'float32' });
    expect(sd.paramGroups).toEqual([{ params: model.trainableWeights.map((w) => variableOf(w).name), lr: 0.01, betas: [0.9, 0.999], eps: 1e-8, weightDecay: 0 }]);
    expect(Object.keys(sd.states)).toEqual(['']);
    const state = sd.states['']!;
    expect(state.step).toBe(3);
    const [kernel] = model.trainableWeights.map(variableOf);
    expect(Object.keys(state.slots[kernel!.name]!)).toEqual(['expAvg', 'expAvgSq']);
    expect(state.slots[kernel!.name]!.expAvg!.shape).toEqual([3, 5]);
    expect(state.slots[kernel!.name]!.expAvg!.data).toBeInstanceOf(Float32Array);
    expect(throughJson(sd)).toMatchObject({ type: 'Adam', states: { '': { step: 3 } } });
  });

  it('resumes training exactly where it stopped: save, destroy, new optimizer, load, wrap again', async () => {
    const uninterrupted = regressor(2);
    const continuous = trainingModel(uninterrupted, { loss: 'meanSquaredError', optimizer: new optim.Adam(uninterrupted, { lr: 0.02 }) });
    await train(continuous, 6);
    continuous.copyWeightsToHost();

    const model = regressor(2);
    const first = trainingModel(model, { loss: 'meanSquaredError', optimizer: new optim.Adam(model, { lr: 0.02 }) });
    await train(first, 3);
    const saved = throughJson(first.getOptimizer()!.stateDict());
    first.copyWeightsToHost();
    first.destroy();
    const resumed = new optim.Adam(model, { lr: 0.02 });
    resumed.loadStateDict(saved);
    const second = trainingModel(model, { loss: 'meanSquaredError', optimizer: resumed });
    await train(second, 3);
    second.copyWeightsToHost();
    model.getWeights().forEach((w, i) => expect(Array.from(w.dataSync())).toEqual(Array.from(uninterrupted.getWeights()[i]!.dataSync())));
    expect(resumed.stateDict().states['']!.step).toBe(6);
  });

  it('writes a loaded state to the device of the executor training with the optimizer, and keeps a copy when it is destroyed', async () => {
    const model = regressor(3);
    const opt = new optim.SGD(model, { lr: 0.1, momentum: 0.9 });
    const executor = trainingModel(model, { loss: 'meanSquaredError', optimizer: opt });
    await train(executor, 2);
    const afterTwo = opt.stateDict();
    await train(executor, 2);
    opt.loadStateDict(afterTwo);
    expect(opt.stateDict().states['']!.step).toBe(2);
    executor.destroy();
    expect(opt.stateDict().states['']!.step).toBe(2);
    expect(Array.from(Object.values(opt.stateDict().states['']!.slots)[0]!.momentumBuffer!.data)).toEqual(
      Array.from(Object.values(afterTwo.states['']!.slots)[0]!.momentumBuffer!.data),
    );
  });

  it('keeps the moving loss scale of automatic loss scaling', async () => {
    const model = regressor(4);
    const opts = new Options();
    opts.Training.setAutomaticLossScaling(true);
    const opt = new optim.SGD(model, { lr: 0.1, lossScaling: 16 });
    const executor = trainingModel(model, { loss: 'meanSquaredError', optimizer: opt, options: opts });
    await train(executor, 3);
    const sd = opt.stateDict();
    expect(sd.lossScale).toBe(128);
    expect(sd.attributes.lossScaling).toBe(16);
    await train(executor, 1);
    opt.loadStateDict(sd);
    expect(executor.currentLossScale()).toBe(128);
  });

  it('refuses a state dict of another optimizer type, other parameters, unknown slots or wrong shapes', async () => {
    const model = regressor(5);
    const adam = new optim.Adam(model);
    const executor = trainingModel(model, { loss: 'meanSquaredError', optimizer: adam });
    await train(executor, 1);
    const sd = adam.stateDict();
    expect(() => new optim.SGD(model).loadStateDict(sd)).toThrow('optim.SGD.loadStateDict: the state dict is of an optim.Adam; this optimizer is an optim.SGD');
    expect(() => new optim.Adam(regressor(6)).loadStateDict(sd)).toThrow(/the state dict's parameter groups .* differ from this optimizer's/);
    const [kernel] = model.trainableWeights.map(variableOf);
    const slots = sd.states['']!.slots;
    const renamed = { ...sd, states: { '': { step: 1, slots: { [kernel!.name]: { momentumBuffer: slots[kernel!.name]!.expAvg! } } } } };
    expect(() => new optim.Adam(model).loadStateDict(renamed)).toThrow(
      `optim.Adam.loadStateDict: parameter '${kernel!.name}' has state slot 'momentumBuffer', which optim.Adam with these values does not keep (it keeps expAvg, expAvgSq)`,
    );
    const reshaped = { ...sd, states: { '': { step: 1, slots: { [kernel!.name]: { expAvg: { shape: [5, 3], data: new Float32Array(15) } } } } } };
    expect(() => adam.loadStateDict(reshaped)).toThrow(
      `optim.Adam.loadStateDict: slot 'expAvg' of parameter '${kernel!.name}' has shape [5,3], but the parameter has shape [3,5]`,
    );
    const short = { ...sd, states: { '': { step: 1, slots: { [kernel!.name]: { expAvg: { shape: [3, 5], data: [1, 2] } } } } } };
    expect(() => adam.loadStateDict(short)).toThrow(/not a poptfjs optimizer state dict \(from opt.stateDict\(\)\): states.*has 2 values for shape \[3,5\] \(15 values\)/);
    expect(() => adam.loadStateDict({ type: 'Adam' })).toThrow(/optim.Adam.loadStateDict: not a poptfjs optimizer state dict/);
    expect(() => executor.getOptimizer()!.stateDict()).not.toThrow();
  });

  it("keeps one state per replica group of a split weight, checked against the device's slices", async () => {
    const W = tf.variable(tf.randomNormal([2, 3, 2], 0, 1, 'float32', 9), true, 'state_dict_split_W');
    const model = (input: tf.Tensor) => tf.matMul(input, W);
    const executor = trainingModel(model, {
      loss: 'meanSquaredError',
      options: new Options().replicationFactor(2),
      optimizer: new optim.SGD([W], { lr: 0.1, momentum: 0.9 }),
    });
    executor.parameter('state_dict_split_W').replicaGrouping(CommGroupType.Consecutive, 1, VariableRetrievalMode.OnePerGroup);
    await train(executor, 2);
    const opt = executor.getOptimizer()!;
    const sd = opt.stateDict();
    expect(Object.keys(sd.states)).toEqual(['state_dict_split_W#0', 'state_dict_split_W#1']);
    expect(sd.states['state_dict_split_W#1']!.slots.state_dict_split_W!.momentumBuffer!.shape).toEqual([3, 2]);
    expect(() => opt.loadStateDict({ ...sd, states: { 'state_dict_split_W#2': sd.states['state_dict_split_W#0']! } })).toThrow(
      "optimizer state 'state_dict_split_W#2': not a state of this device; keys are '' and '<parameter split across replica groups>#<group>'",
    );
    const slots = { state_dict_split_W: { momentumBuffer: { shape: [2, 3], data: new Float32Array(6) } } };
    expect(() => opt.loadStateDict({ ...sd, states: { 'state_dict_split_W#0': { step: 2, slots } } })).toThrow(
      "optimizer state 'state_dict_split_W#0': slot 'momentumBuffer' of parameter 'state_dict_split_W' has shape [2,3], but the parameter has shape [3,2] on the device",
    );
    expect(() => opt.loadStateDict({ ...sd, states: { '': sd.states['state_dict_split_W#0']! } })).toThrow(
      "optim.SGD.loadStateDict: slot 'momentumBuffer' of parameter 'state_dict_split_W' has shape [3,2], but the parameter has shape [2,3,2]",
    );
    opt.loadStateDict(sd);
    expect(opt.stateDict().states['state_dict_split_W#0']!.step).toBe(2);
  });
});
