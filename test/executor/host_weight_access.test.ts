/**
 * The host model shows the trained weights whenever it is read, without a
 * copy per step: a step marks the host weights stale and the first read
 * copies them back, as PopTorch's parameter hooks do. The copies are counted
 * through `LoadedExecutable.storeWeights`.
 */
import * as tf from '@tensorflow/tfjs';
import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import { inferenceModel, ops, optim, trainingModel } from 'poptfjs';
import { LoadedExecutable } from '../../lib/runtime/loaded_executable.js';
import { expectClose, variableOf } from '../helpers.js';

const x = tf.tensor2d([
  [0.5, -1, 2],
  [1.5, 0.25, -0.5],
  [-1, 1, 1],
  [0.2, 0.4, -2],
]);
const y = tf.tensor2d([
  [1, 0],
  [0, 1],
  [1, 1],
  [-1, 0.5],
]);
const lr = 0.05;

function dense(seed: number): tf.Sequential {
  return tf.sequential({
    layers: [tf.layers.dense({ units: 2, inputShape: [3], kernelInitializer: tf.initializers.glorotUniform({ seed }), biasInitializer: 'ones' })],
  });
}

/** Plain tfjs SGD on `model` with the mean squared error: the reference the device must match. */
function referenceStep(model: tf.LayersModel): void {
  const vars = model.trainableWeights.map(variableOf);
  tf.tidy(() => {
    const { grads } = tf.variableGrads(() => tf.mean(tf.square(tf.sub(model.apply(x) as tf.Tensor, y))) as tf.Scalar, vars);
    for (const v of vars) v.assign(tf.sub(v, tf.mul(grads[v.name]!, lr)));
  });
}

async function trained(seed: number, steps: number) {
  const model = dense(seed);
  const reference = dense(seed);
  const executor = trainingModel(model, { loss: 'meanSquaredError', optimizer: new optim.SGD(model, { lr }) });
  for (let i = 0; i < steps; i++) {
    await executor(x, y);
    referenceStep(reference);
  }
  return { model, reference, executor };
}

let copies: MockInstance;
beforeEach(() => {
  copies = vi.spyOn(LoadedExecutable.prototype, 'storeWeights');
});
afterEach(() => {
  copies.mockRestore();
});

describe('host weights after training steps', () => {
  it('are copied back once, on the first read after the steps, and show the trained values through getWeights', async () => {
    const { model, reference, executor } = await trained(1, 4);
    expect(copies).toHaveBeenCalledTimes(0);
    const weights = model.getWeights();
    expect(copies).toHaveBeenCalledTimes(0);
    weights.forEach((w, i) => expectClose(w, reference.getWeights()[i]!, 1e-5, 1e-6));
    expect(copies).toHaveBeenCalledTimes(1);
    model.getWeights().forEach((w) => w.dataSync());
    expect(copies).toHaveBeenCalledTimes(1);
    for (let i = 0; i < 3; i++) {
      await executor(x, y);
      referenceStep(reference);
    }
    expect(copies).toHaveBeenCalledTimes(1);
    // A tensor taken from getWeights() before the steps is the variable itself: it shows the new values too.
    expectClose(weights[0]!, reference.getWeights()[0]!, 1e-5, 1e-6);
    expect(copies).toHaveBeenCalledTimes(2);
  });

  it('are the trained ones in model.predict, weights[i].read(), array() and model.save', async () => {
    const { model, reference, executor } = await trained(2, 3);
    expectClose(model.predict(x) as tf.Tensor, reference.predict(x) as tf.Tensor, 1e-5, 1e-6);
    expect(copies).toHaveBeenCalledTimes(1);

    await executor(x, y);
    referenceStep(reference);
    expect(await model.weights[1]!.read().array()).toEqual(await reference.weights[1]!.read().array());
    expect(copies).toHaveBeenCalledTimes(2);

    await executor(x, y);
    referenceStep(reference);
    let saved: tf.NamedTensorMap | undefined;
    await model.save(
      tf.io.withSaveHandler(async (artifacts) => {
        saved = tf.io.decodeWeights(artifacts.weightData as ArrayBuffer, artifacts.weightSpecs!);
        return { modelArtifactsInfo: { dateSaved: new Date(), modelTopologyType: 'JSON' } };
      }),
    );
    expect(copies).toHaveBeenCalledTimes(3);
    const savedWeights = Object.values(saved!);
    expect(savedWeights).toHaveLength(2);
    savedWeights.forEach((w, i) => expectClose(w, reference.getWeights()[i]!, 1e-5, 1e-6));
  });

  it('are copied by destroy(), as PopTorch does', async () => {
    const { model, reference, executor } = await trained(3, 5);
    executor.destroy();
    expect(copies).toHaveBeenCalledTimes(1);
    model.getWeights().forEach((w, i) => expectClose(w, reference.getWeights()[i]!, 1e-5, 1e-6));
    expect(copies).toHaveBeenCalledTimes(1);
  });

  it('copyWeightsToHostIfNeeded copies only after a step', async () => {
    const { model, reference, executor } = await trained(4, 2);
    expect(executor.copyWeightsToHostIfNeeded()).toBe(true);
    expect(executor.copyWeightsToHostIfNeeded()).toBe(false);
    expect(copies).toHaveBeenCalledTimes(1);
    model.getWeights().forEach((w, i) => expectClose(w, reference.getWeights()[i]!, 1e-5, 1e-6));
    expect(copies).toHaveBeenCalledTimes(1);
  });

  it('are the trained ones in an inference executor of the model, and its reads copy nothing more', async () => {
    const { model, reference, executor } = await trained(5, 3);
    const inference = inferenceModel(model);
    expectClose((await inference(x)) as tf.Tensor, reference.predict(x) as tf.Tensor, 1e-5, 1e-6);
    expect(copies).toHaveBeenCalledTimes(1);
    for (let i = 0; i < 2; i++) {
      await executor(x, y);
      referenceStep(reference);
    }
    model.getWeights()[0]!.dataSync();
    expect(copies).toHaveBeenCalledTimes(2);
    expectClose((await inference(x)) as tf.Tensor, reference.predict(x) as tf.Tensor, 1e-5, 1e-6);
    expect(copies).toHaveBeenCalledTimes(2);
  });
});

describe('the tf.Variables of a trained function', () => {
  /** out = x·w + b with x the identity, loss = mean((out - t)²), SGD lr 0.1 from zeros: by hand, r = w + b - t, w -= 0.1 r, b -= 0.1 Σr. */
  function handTrained(steps: number): { w: number[]; b: number } {
    const t = [1, 2];
    let w = [0, 0];
    let b = 0;
    for (let s = 0; s < steps; s++) {
      const r = w.map((wi, i) => wi + b - t[i]!);
      w = w.map((wi, i) => wi - 0.1 * r[i]!);
      b -= 0.1 * (r[0]! + r[1]!);
    }
    return { w, b };
  }

  async function trainFunction(prefix: string, steps: number) {
    const w = tf.variable(tf.zeros([2, 1]), true, `${prefix}_w`);
    const b = tf.variable(tf.zeros<tf.Rank.R1>([1]), true, `${prefix}_b`);
    const fn = (input: tf.Tensor, target: tf.Tensor) => {
      const out = tf.add(tf.matMul(input, w), b);
      return [out, ops.identityLoss(tf.square(tf.sub(out, target)), 'mean')];
    };
    const executor = trainingModel(fn, { optimizer: new optim.SGD([w, b], { lr: 0.1 }) });
    for (let s = 0; s < steps; s++)
      await executor(
        tf.tensor2d([
          [1, 0],
          [0, 1],
        ]),
        tf.tensor2d([[1], [2]]),
      );
    return { w, b, executor };
  }

  it('show the trained values to dataSync, array and ops, after one copy', async () => {
    const { w, b } = await trainFunction('fn_reads', 3);
    const expected = handTrained(3);
    expect(copies).toHaveBeenCalledTimes(0);
    Array.from(w.dataSync()).forEach((v, i) => expect(v).toBeCloseTo(expected.w[i]!, 6));
    expect(copies).toHaveBeenCalledTimes(1);
    expect((await b.array())[0]).toBeCloseTo(expected.b, 6);
    expect(tf.add(b, 10).dataSync()[0]).toBeCloseTo(10 + expected.b, 6);
    expect(copies).toHaveBeenCalledTimes(1);
  });

  it('are copied before an op reads them', async () => {
    const { b } = await trainFunction('fn_op', 4);
    expect(tf.mul(b, 2).dataSync()[0]).toBeCloseTo(2 * handTrained(4).b, 6);
    expect(copies).toHaveBeenCalledTimes(1);
  });

  it('assign writes over the trained value: the other weights are copied first', async () => {
    const { w, b, executor } = await trainFunction('fn_assign', 2);
    w.assign(tf.tensor2d([[5], [6]]));
    expect(copies).toHaveBeenCalledTimes(1);
    expect(Array.from(w.dataSync())).toEqual([5, 6]);
    expect(b.dataSync()[0]).toBeCloseTo(handTrained(2).b, 6);
    // The device keeps training from its own weights until they are copied to it.
    await executor(
      tf.tensor2d([
        [1, 0],
        [0, 1],
      ]),
      tf.tensor2d([[1], [2]]),
    );
    Array.from(w.dataSync()).forEach((v, i) => expect(v).toBeCloseTo(handTrained(3).w[i]!, 6));
  });
});
