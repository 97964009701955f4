import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { Options, PoptfjsError, inferenceModel, isRunningOnIpu } from 'poptfjs';
import { expectClose, liveTensors } from '../helpers.js';

function classifier(): tf.Sequential {
  return tf.sequential({
    layers: [tf.layers.dense({ units: 16, inputShape: [8], activation: 'relu' }), tf.layers.dropout({ rate: 0.3 }), tf.layers.dense({ units: 4, activation: 'softmax' })],
  });
}

describe('inferenceModel', () => {
  it('equals model.predict', async () => {
    const model = classifier();
    const x = tf.randomNormal([6, 8]);
    const executor = inferenceModel(model);
    expectClose((await executor.run(x)) as tf.Tensor, model.predict(x) as tf.Tensor);
    expect(executor.isCompiled()).toBe(true);
  });

  it('is callable like the model', async () => {
    const model = classifier();
    const x = tf.randomNormal([2, 8]);
    const executor = inferenceModel(model);
    expectClose((await executor(x)) as tf.Tensor, model.predict(x) as tf.Tensor);
  });

  it('equals model.predict for a functional model with two inputs and two outputs', async () => {
    const a = tf.input({ shape: [3] });
    const b = tf.input({ shape: [5] });
    const h = tf.layers.dense({ units: 6, activation: 'tanh' }).apply(tf.layers.concatenate().apply([a, b])) as tf.SymbolicTensor;
    const model = tf.model({
      inputs: [a, b],
      outputs: [tf.layers.dense({ units: 2 }).apply(h) as tf.SymbolicTensor, tf.layers.dense({ units: 1 }).apply(h) as tf.SymbolicTensor],
    });
    const xa = tf.randomNormal([8, 3]);
    const xb = tf.randomNormal([8, 5]);
    const opts = new Options().deviceIterations(4);
    const out = (await inferenceModel(model, { options: opts }).run(xa, xb)) as tf.Tensor[];
    const expected = model.predict([xa, xb]) as tf.Tensor[];
    expect(out).toHaveLength(2);
    expectClose(out[0]!, expected[0]!);
    expectClose(out[1]!, expected[1]!);
  });

  it('runs deviceIterations micro-batches per call and returns all outputs by default', async () => {
    const model = classifier();
    const x = tf.randomNormal([12, 8]);
    const executor = inferenceModel(model, { options: new Options().deviceIterations(4) });
    const out = (await executor.run(x)) as tf.Tensor;
    expect(out.shape).toEqual([12, 4]);
    expectClose(out, model.predict(x) as tf.Tensor);
    expect(executor.executable.microBatchSize).toBe(3);
  });

  it('returns the final, summed or every N-th device iteration as the output mode says', async () => {
    const model = classifier();
    const x = tf.randomNormal([8, 8]);
    const reference = model.predict(x) as tf.Tensor;
    const run = async (configure: (o: Options) => Options) => (await inferenceModel(model, { options: configure(new Options().deviceIterations(4)) }).run(x)) as tf.Tensor;
    expectClose(await run((o) => o.outputMode('Final')), reference.slice([6], [2]));
    const micro = [0, 1, 2, 3].map((i) => reference.slice([2 * i], [2]));
    expectClose(await run((o) => o.outputMode('Sum')), tf.addN(micro), 1e-5, 1e-5);
    expectClose(await run((o) => o.outputMode('EveryN', 2)), tf.concat([micro[1]!, micro[3]!]));
    expectClose(await run((o) => o.outputMode('All')), reference);
  });

  it('rejects EveryN periods that do not divide deviceIterations', async () => {
    const model = classifier();
    const executor = inferenceModel(model, { options: new Options().deviceIterations(4).outputMode('EveryN', 3) });
    await expect(executor.run(tf.ones([8, 8]))).rejects.toThrow(/deviceIterations \(4\) must be a multiple of 3/);
  });

  it('spells out the batch arithmetic for a host batch of the wrong size, and stays usable', async () => {
    const model = classifier();
    const opts = new Options().deviceIterations(4).replicationFactor(2);
    const executor = inferenceModel(model, { options: opts });
    await expect(executor.run(tf.ones([12, 8]))).rejects.toThrow(
      'a host batch of 12 samples cannot be split into micro-batches: one call consumes microBatch × deviceIterations(4) × (replicationFactor(2) / inputGroupSize(1)) × gradientAccumulation(1) = microBatch × 8 samples, and 12 is not a positive multiple of 8',
    );
    expect(executor.isCompiled()).toBe(false);
    expect(((await executor.run(tf.ones([16, 8]))) as tf.Tensor).shape).toEqual([16, 4]);
    await expect(executor.run(tf.ones([24, 8]))).rejects.toThrow(
      'input 0 has shape [24,8], but the model was compiled for [16,8] (host batch 16 = microBatch(2) × deviceIterations(4) × (replicationFactor(2) / inputGroupSize(1)) × gradientAccumulation(1))',
    );
    expect(((await executor.run(tf.ones([16, 8]))) as tf.Tensor).shape).toEqual([16, 4]);
  });

  it('rejects wrong input counts, shapes, dtypes and non-tensors with the documented errors', async () => {
    const model = classifier();
    const executor = inferenceModel(model);
    await expect(executor.run(tf.ones([2, 8]), tf.ones([2, 8]))).rejects.toThrow(/tracing model .* failed/);
    expect(executor.isCompiled()).toBe(false);
    const x = tf.ones([2, 8]);
    await executor.run(x);
    await expect(executor.run()).rejects.toThrow('expected 1 input tensor(s) as at compile (input 0: float32[2,8]), got 0');
    await expect(executor.run(tf.ones([2, 7]))).rejects.toThrow('input 0 has shape [2,7], but the model was compiled for [2,8]');
    await expect(executor.run(tf.ones([2, 8], 'int32'))).rejects.toThrow('input 0 has dtype int32, but the model was compiled for float32');
    await expect(executor.run([1, 2] as unknown as tf.Tensor)).rejects.toThrow('input 0 is an array; expected a tf.Tensor');
    await expect(executor.run(3 as unknown as tf.Tensor)).rejects.toThrow(PoptfjsError);
    expectClose((await executor.run(x)) as tf.Tensor, model.predict(x) as tf.Tensor);
  });

  it('runs plain functions, with isRunningOnIpu true on the device path', async () => {
    const fn = (x: tf.Tensor) => (isRunningOnIpu() ? tf.mul(x, 2) : tf.mul(x, 3));
    const out = (await inferenceModel(fn).run(tf.tensor1d([1, 2]))) as tf.Tensor;
    expect(Array.from(out.dataSync())).toEqual([2, 4]);
    expect(Array.from((fn(tf.tensor1d([1, 2])) as tf.Tensor).dataSync())).toEqual([3, 6]);
  });

  it('keeps buffers the model updates in place on the device across runs', async () => {
    const counter = tf.variable(tf.zeros([1]), false, 'inference_counter');
    const fn = () => {
      counter.assign(tf.add(counter, 1));
      return tf.clone(counter);
    };
    const executor = inferenceModel(fn);
    expect(((await executor.run()) as tf.Tensor).dataSync()[0]).toBe(1);
    expect(((await executor.run()) as tf.Tensor).dataSync()[0]).toBe(2);
    expect(counter.dataSync()[0]).toBe(0);
    executor.copyWeightsToHost();
    expect(counter.dataSync()[0]).toBe(2);
  });

  it('does not leak tensors over hundreds of calls', async () => {
    const model = classifier();
    const x = tf.randomNormal([8, 8]);
    const executor = inferenceModel(model, { options: new Options().deviceIterations(2) });
    tf.dispose((await executor.run(x)) as tf.Tensor);
    const before = liveTensors();
    for (let i = 0; i < 300; i++) tf.dispose((await executor.run(x)) as tf.Tensor);
    expect(liveTensors()).toBe(before);
    executor.destroy();
  });

  it('cannot be used after destroy()', async () => {
    const executor = inferenceModel(classifier());
    await executor.run(tf.ones([1, 8]));
    executor.destroy();
    await expect(executor.run(tf.ones([1, 8]))).rejects.toThrow('compile: this executor was destroyed; wrap the model again to use it');
  });

  it('rejects things that are not models', () => {
    expect(() => inferenceModel({} as unknown as tf.LayersModel)).toThrow('inferenceModel: expected a tf.LayersModel or a function of tensors, got object');
  });
});
