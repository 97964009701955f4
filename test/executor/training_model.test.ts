import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { Options, inferenceModel, ops, optim, trainingModel } from 'poptfjs';
import { expectClose, liveTensors, variableOf } from '../helpers.js';

function regressor(seed: number): tf.Sequential {
  return tf.sequential({
    layers: [
      tf.layers.dense({ units: 6, inputShape: [5], activation: 'tanh', kernelInitializer: tf.initializers.glorotUniform({ seed }) }),
      tf.layers.dense({ units: 3, kernelInitializer: tf.initializers.glorotUniform({ seed: seed + 1 }) }),
    ],
  });
}

/** One hand-written tfjs SGD step on `model` with MSE over the whole batch. */
function handWrittenStep(model: tf.LayersModel, x: tf.Tensor, y: tf.Tensor, lr: number): number {
  const vars = model.trainableWeights.map(variableOf);
  return tf.tidy(() => {
    const { value, grads } = tf.variableGrads(() => tf.mean(tf.square(tf.sub(model.apply(x) as tf.Tensor, y))) as tf.Scalar, vars);
    for (const v of vars) v.assign(tf.sub(v, tf.mul(grads[v.name]!, lr)));
    return value.dataSync()[0]!;
  });
}

function weightsOf(model: tf.LayersModel): tf.Tensor[] {
  return model.getWeights().map((w) => tf.clone(w));
}

describe('trainingModel', () => {
  it('equals hand-written tfjs SGD step for step', async () => {
    const model = regressor(1);
    const reference = regressor(1);
    const x = tf.randomNormal([4, 5], 0, 1, 'float32', 3);
    const y = tf.randomNormal([4, 3], 0, 1, 'float32', 4);
    const executor = trainingModel(model, { loss: 'meanSquaredError', optimizer: new optim.SGD(model, { lr: 0.1 }) });
    for (let step = 0; step < 25; step++) {
      const [, loss] = await executor.run(x, y);
      expect(loss.dataSync()[0]).toBeCloseTo(handWrittenStep(reference, x, y, 0.1), 5);
    }
    executor.copyWeightsToHost();
    weightsOf(model).forEach((w, i) => expectClose(w, reference.getWeights()[i]!, 1e-5, 1e-6));
  });

  it("uses the compiled loss and optimizer of a layers model ('sgd': lr 0.01)", async () => {
    const model = regressor(2);
    model.compile({ optimizer: 'sgd', loss: 'meanSquaredError' });
    const reference = regressor(2);
    const x = tf.randomNormal([3, 5]);
    const y = tf.randomNormal([3, 3]);
    const executor = trainingModel(model);
    for (let step = 0; step < 5; step++) {
      const [, loss] = await executor.run(x, y);
      expect(loss.dataSync()[0]).toBeCloseTo(handWrittenStep(reference, x, y, 0.01), 5);
    }
    expect(executor.getOptimizer()?.type).toBe('SGD');
  });

  it('takes a loss function in tfjs argument order', async () => {
    const model = regressor(3);
    const x = tf.randomNormal([2, 5]);
    const y = tf.randomNormal([2, 3]);
    const calls: string[] = [];
    const loss = (yTrue: tf.Tensor, yPred: tf.Tensor) => {
      calls.push(`${yTrue.shape}|${yPred.shape}`);
      return tf.mean(tf.abs(tf.sub(yTrue, yPred)));
    };
    const expected = tf.mean(tf.abs(tf.sub(y, model.predict(x) as tf.Tensor))).dataSync()[0]!;
    const [out, value] = await trainingModel(model, { loss }).run(x, y);
    expect(calls).toEqual(['2,3|2,3']);
    expect(value.dataSync()[0]).toBeCloseTo(expected, 5);
    expect((out as tf.Tensor).shape).toEqual([2, 3]);
  });

  it('trains a function that returns [output, identityLoss(...)]', async () => {
    const w = tf.variable(tf.zeros([2, 1]), true, 'identity_loss_w');
    const fn = (x: tf.Tensor, target: tf.Tensor) => {
      const out = tf.matMul(x, w);
      return [out, ops.identityLoss(tf.square(tf.sub(out, target)), 'mean')];
    };
    const executor = trainingModel(fn, { optimizer: new optim.SGD([w], { lr: 0.1 }) });
    const x = tf.tensor2d([
      [1, 0],
      [0, 1],
    ]);
    const target = tf.tensor2d([[1], [2]]);
    let last = Infinity;
    for (let i = 0; i < 100; i++) {
      const [, loss] = await executor.run(x, target);
      last = loss.dataSync()[0]!;
    }
    expect(last).toBeLessThan(1e-4);
    executor.copyWeightsToHost();
    expectClose(w, tf.tensor2d([[1], [2]]), 1e-2, 1e-2);
  });

  it('accumulates gradients over micro-batches: a mean over GA micro-batches equals one step on the whole batch', async () => {
    const model = regressor(4);
    const reference = regressor(4);
    const x = tf.randomNormal([8, 5]);
    const y = tf.randomNormal([8, 3]);
    const opts = new Options();
    opts.Training.gradientAccumulation(4);
    const executor = trainingModel(model, { loss: 'meanSquaredError', options: opts, optimizer: new optim.SGD(model, { lr: 0.05 }) });
    for (let step = 0; step < 3; step++) {
      await executor.run(x, y);
      handWrittenStep(reference, x, y, 0.05);
    }
    executor.copyWeightsToHost();
    weightsOf(model).forEach((w, i) => expectClose(w, reference.getWeights()[i]!, 1e-5, 1e-6));
  });

  it('Sum reduction adds the micro-batch gradients; Running mean equals Post mean', async () => {
    const x = tf.randomNormal([4, 5]);
    const y = tf.randomNormal([4, 3]);
    const train = async (configure: (o: Options) => void, lr: number) => {
      const model = regressor(5);
      const opts = new Options();
      opts.Training.gradientAccumulation(2);
      configure(opts);
      const executor = trainingModel(model, { loss: 'meanSquaredError', options: opts, optimizer: new optim.SGD(model, { lr }) });
      await executor.run(x, y);
      executor.copyWeightsToHost();
      return weightsOf(model);
    };
    const post = await train(() => {}, 0.1);
    const sum = await train((o) => o.Training.accumulationAndReplicationReductionType('Sum'), 0.05);
    const running = await train((o) => o.Training.setMeanAccumulationAndReplicationReductionStrategy('Running'), 0.1);
    post.forEach((w, i) => {
      expectClose(sum[i]!, w, 1e-5, 1e-6);
      expectClose(running[i]!, w, 1e-5, 1e-6);
    });
  });

  it('runs one optimizer step per device iteration, in host-batch order', async () => {
    const model = regressor(6);
    const reference = regressor(6);
    const x = tf.randomNormal([6, 5]);
    const y = tf.randomNormal([6, 3]);
    const opts = new Options().deviceIterations(3).outputMode('All');
    const executor = trainingModel(model, { loss: 'meanSquaredError', options: opts, optimizer: new optim.SGD(model, { lr: 0.1 }) });
    const [out, loss] = await executor.run(x, y);
    expect((out as tf.Tensor).shape).toEqual([6, 3]);
    expect(loss.shape).toEqual([3]);
    const expected = [0, 1, 2].map((d) => handWrittenStep(reference, x.slice([2 * d], [2]), y.slice([2 * d], [2]), 0.1));
    Array.from(loss.dataSync()).forEach((l, i) => expect(l).toBeCloseTo(expected[i]!, 5));
    executor.copyWeightsToHost();
    weightsOf(model).forEach((w, i) => expectClose(w, reference.getWeights()[i]!, 1e-5, 1e-6));
  });

  it('returns the final micro-batch by default, with a scalar loss', async () => {
    const model = regressor(7);
    const opts = new Options().deviceIterations(2);
    opts.Training.gradientAccumulation(2);
    const [out, loss] = await trainingModel(model, { loss: 'meanSquaredError', options: opts }).run(tf.ones([8, 5]), tf.ones([8, 3]));
    expect((out as tf.Tensor).shape).toEqual([2, 3]);
    expect(loss.shape).toEqual([]);
  });

  it('data-parallel replicas average their gradients like one step on the whole batch', async () => {
    const model = regressor(8);
    const reference = regressor(8);
    const x = tf.randomNormal([4, 5]);
    const y = tf.randomNormal([4, 3]);
    const opts = new Options().replicationFactor(2);
    const executor = trainingModel(model, { loss: 'meanSquaredError', options: opts, optimizer: new optim.SGD(model, { lr: 0.1 }) });
    const [, loss] = await executor.run(x, y);
    expect(loss.shape).toEqual([2]);
    handWrittenStep(reference, x, y, 0.1);
    executor.copyWeightsToHost();
    weightsOf(model).forEach((w, i) => expectClose(w, reference.getWeights()[i]!, 1e-5, 1e-6));
  });

  it('keeps an inference executor of the same model in sync implicitly', async () => {
    const model = regressor(9);
    const x = tf.randomNormal([2, 5]);
    const y = tf.randomNormal([2, 3]);
    const training = trainingModel(model, { loss: 'meanSquaredError', optimizer: new optim.SGD(model, { lr: 0.5 }) });
    const inference = inferenceModel(model);
    const before = ((await inference.run(x)) as tf.Tensor).clone();
    for (let i = 0; i < 3; i++) await training.run(x, y);
    const after = (await inference.run(x)) as tf.Tensor;
    expect(tf.max(tf.abs(tf.sub(after, before))).dataSync()[0]).toBeGreaterThan(1e-3);
    expectClose(after, model.predict(x) as tf.Tensor);
  });

  it('needs copyWeightsToDevice after the host weights change outside poptfjs', async () => {
    const model = regressor(10);
    const x = tf.randomNormal([2, 5]);
    const inference = inferenceModel(model);
    const first = ((await inference.run(x)) as tf.Tensor).clone();
    model.setWeights(model.getWeights().map((w) => tf.mul(w, 2)));
    expectClose((await inference.run(x)) as tf.Tensor, first);
    inference.copyWeightsToDevice();
    expectClose((await inference.run(x)) as tf.Tensor, model.predict(x) as tf.Tensor);
  });

  it('an inference executor of the training executor answers with weights set on the host and copied to the training device', async () => {
    const model = tf.sequential({ layers: [tf.layers.dense({ units: 1, inputShape: [2], useBias: false, kernelInitializer: 'ones' })] });
    const training = trainingModel(model, { loss: 'meanSquaredError', optimizer: new optim.SGD(model, { lr: 0.1 }) });
    const inference = inferenceModel(training);
    const x = tf.tensor2d([[1, 2]]);
    await training.run(x, tf.tensor2d([[0]]));
    // One SGD step from kernel [1, 1]: prediction 3, gradient 2·3·x = [6, 12], kernel [0.4, -0.2], prediction 0.
    expect(Array.from(((await inference.run(x)) as tf.Tensor).dataSync())[0]).toBeCloseTo(0, 5);
    model.setWeights([tf.tensor2d([[3], [4]])]);
    training.copyWeightsToDevice();
    expect(Array.from(((await inference.run(x)) as tf.Tensor).dataSync())).toEqual([11]);
    const [out] = await training.run(x, tf.tensor2d([[11]]));
    expect(Array.from((out as tf.Tensor).dataSync())).toEqual([11]);
  });

  it('refuses to wrap a model that a live executor trains, until it is destroyed', () => {
    const model = regressor(11);
    const first = trainingModel(model, { loss: 'meanSquaredError' });
    expect(() => trainingModel(model, { loss: 'meanSquaredError' })).toThrow(/already wrapped by a live trainingModel executor; call destroy\(\) on that executor/);
    first.destroy();
    expect(() => trainingModel(model, { loss: 'meanSquaredError' })).not.toThrow();
  });

  it('freezes the options it is given', () => {
    const opts = new Options();
    trainingModel(regressor(12), { options: opts, loss: 'meanSquaredError' });
    expect(opts.isFrozen()).toBe(true);
    expect(() => opts.deviceIterations(2)).toThrow(/clone\(\)/);
    expect(() => opts.clone().deviceIterations(2)).not.toThrow();
  });

  it('applies a new learning rate from setOptimizer without recompiling', async () => {
    const model = regressor(13);
    const reference = regressor(13);
    const x = tf.randomNormal([2, 5]);
    const y = tf.randomNormal([2, 3]);
    const opt = new optim.SGD(model, { lr: 0.1 });
    const executor = trainingModel(model, { loss: 'meanSquaredError', optimizer: opt });
    await executor.run(x, y);
    handWrittenStep(reference, x, y, 0.1);
    opt.lr = 0.01;
    executor.setOptimizer(opt);
    await executor.run(x, y);
    handWrittenStep(reference, x, y, 0.01);
    expect(executor.compileCount).toBe(1);
    executor.copyWeightsToHost();
    weightsOf(model).forEach((w, i) => expectClose(w, reference.getWeights()[i]!, 1e-5, 1e-6));
  });

  it('does not leak tensors over hundreds of training steps', async () => {
    const model = regressor(14);
    const opts = new Options().deviceIterations(2);
    opts.Training.gradientAccumulation(2);
    const executor = trainingModel(model, { loss: 'meanSquaredError', options: opts, optimizer: new optim.SGD(model, { lr: 0.01, momentum: 0.9 }) });
    const x = tf.randomNormal([8, 5]);
    const y = tf.randomNormal([8, 3]);
    const step = async () => {
      const [out, loss] = await executor.run(x, y);
      tf.dispose([out as tf.Tensor, loss]);
    };
    await step();
    await step();
    const before = liveTensors();
    for (let i = 0; i < 200; i++) await step();
    expect(liveTensors()).toBe(before);
  });

  it('applies the IR patterns chosen in the options and reports which fired, with the same numbers', async () => {
    const x = tf.randomNormal([4, 5], 0, 1, 'float32', 21);
    const y = tf.randomNormal([4, 3], 0, 1, 'float32', 22);
    const train = async (opts: Options) => {
      const model = regressor(16);
      const executor = trainingModel(model, { loss: 'meanSquaredError', options: opts, optimizer: new optim.SGD(model, { lr: 0.1 }) });
      for (let i = 0; i < 3; i++) await executor.run(x, y);
      executor.copyWeightsToHost();
      return { executor, weights: weightsOf(model) };
    };
    const optimized = await train(new Options());
    const plain = await train(new Options().patterns('NoPatterns'));
    expect(optimized.executor.patterns()).toMatchObject({ TransposedMatMul: expect.any(Number), NoOpRemoval: expect.any(Number) });
    expect(plain.executor.patterns()).toEqual({});
    optimized.weights.forEach((w, i) => expectClose(w, plain.weights[i]!, 1e-5, 1e-6));
    expect(() => new Options().patterns('Default', { NoSuchPattern: true })).toThrow(/unknown pattern 'NoSuchPattern'; known patterns: /);
  });

  it('shows the compiled IR as text', async () => {
    const model = regressor(15);
    const executor = trainingModel(model, { loss: 'meanSquaredError' });
    expect(() => executor.irText()).toThrow('irText: the model is not compiled yet; call compile(...inputs) or run it once');
    await executor.compile(tf.ones([1, 5]), tf.ones([1, 3]));
    const text = executor.irText();
    expect(text).toContain('lossScale');
    expect(text).toMatch(/# backward/);
    expect(text).toMatch(/gradients=\{/);
  });

  it('draws a fresh dropout mask on every step of a built Sequential model, each kept value scaled by 1 / (1 - rate)', async () => {
    // Ones through a 1 → 400 dense layer of ones: each of the 400 values of dropout(0.5) is 0 or 1 / 0.5 = 2.
    const model = tf.sequential({
      layers: [tf.layers.dense({ units: 400, inputShape: [1], useBias: false, kernelInitializer: 'ones' }), tf.layers.dropout({ rate: 0.5 })],
    });
    const executor = trainingModel(model, { loss: 'meanSquaredError', optimizer: new optim.SGD(model, { lr: 0 }) });
    const step = async () => {
      const [output, loss] = (await executor(tf.ones([1, 1]), tf.ones([1, 400]))) as [tf.Tensor, tf.Tensor];
      const values = [...output.dataSync()];
      expect(values.every((v) => v === 0 || v === 2)).toBe(true);
      // MSE against ones: each value is 1 away from its label.
      expect(loss.dataSync()[0]).toBeCloseTo(1, 6);
      return values;
    };
    const first = await step();
    const second = await step();
    for (const mask of [first, second]) {
      expect(mask.filter((v) => v === 2).length).toBeGreaterThan(150);
      expect(mask.filter((v) => v === 2).length).toBeLessThan(250);
    }
    expect(second).not.toEqual(first);
    executor.destroy();
  });
});
