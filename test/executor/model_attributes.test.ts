/**
 * The executor shows the wrapped model's own properties and methods where it
 * has none of that name, as PopTorch's `PoplarExecutor.__getattr__` forwards
 * attribute access to the module. Written from PopTorch's tests/buffers_test.py
 * (test_buffer_update_with_param: `poptorch_model.conv.bias` and
 * `poptorch_model.test_buff` read after training equal the module's) and
 * tests/batching_test.py (`poptorch_model.linear.weight.data`).
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { PoplarExecutor, inferenceModel, optim, trainingModel } from 'poptfjs';
import { expectClose } from '../helpers.js';

function denseModel(name: string): tf.Sequential {
  return tf.sequential({
    name,
    layers: [tf.layers.dense({ units: 3, inputShape: [4], name: `${name}_fc`, kernelInitializer: tf.initializers.glorotUniform({ seed: 3 }), biasInitializer: 'ones' })],
  });
}

describe("the executor's view of the wrapped model", () => {
  it("reads a layer's weights through the executor: after a step they are the device's trained weights", async () => {
    const model = denseModel('forwarded_train');
    const [w0, b0] = model.getWeights().map((w) => w.clone());
    const x = tf.randomNormal([2, 4], 0, 1, 'float32', 8);
    const t = tf.randomNormal([2, 3], 0, 1, 'float32', 9);
    const executor = trainingModel(model, { loss: 'meanSquaredError', optimizer: new optim.SGD(model, { lr: 0.5 }) });
    tf.dispose(await executor.run(x, t));

    // One SGD step by hand: d mean((xW + b - t)^2) / dW and / db.
    const [dW, db] = tf.grads((w: tf.Tensor, b: tf.Tensor) => tf.mean(tf.square(tf.sub(tf.add(tf.matMul(x, w), b), t))))([w0!, b0!]);
    const layer = executor.getLayer('forwarded_train_fc');
    expect(layer).toBe(model.layers[0]);
    expectClose(layer.getWeights()[0]!, tf.sub(w0!, tf.mul(dW!, 0.5)));
    expectClose(executor.layers[0]!.getWeights()[1]!, tf.sub(b0!, tf.mul(db!, 0.5)));
    // A method runs on the model itself (the host), with the trained weights.
    expectClose(executor.predict(x) as tf.Tensor, tf.add(tf.matMul(x, tf.sub(w0!, tf.mul(dW!, 0.5))), tf.sub(b0!, tf.mul(db!, 0.5))));
    executor.destroy();
  });

  it("keeps the executor's own names, and shows the model's name and properties", async () => {
    const model = denseModel('forwarded_names');
    const executor = inferenceModel(model);
    expect(executor.name).toBe('forwarded_names');
    expect(executor.inputs).toBe(model.inputs);
    expect('countParams' in executor).toBe(true);
    expect(executor.countParams()).toBe(4 * 3 + 3);
    // The executor's methods win over the model's of the same name, as PopTorch's do.
    expect(executor.compile).toBe(PoplarExecutor.prototype.compile);
    expect(executor.getWeights === model.getWeights).toBe(false);
    expect(executor instanceof PoplarExecutor).toBe(true);
    expect((executor as unknown as Record<string, unknown>).noSuchProperty).toBeUndefined();
    expect('noSuchProperty' in executor).toBe(false);
    const out = (await executor(tf.ones([1, 4]))) as tf.Tensor;
    expectClose(out, model.predict(tf.ones([1, 4])) as tf.Tensor);
    executor.destroy();
  });

  it("shows a function model's own properties", async () => {
    const scaled = Object.assign((x: tf.Tensor) => tf.mul(x, 3), { factor: 3 });
    const executor = inferenceModel(scaled);
    expect((executor as unknown as { factor: number }).factor).toBe(3);
    expectClose((await executor(tf.tensor1d([1, 2]))) as tf.Tensor, tf.tensor1d([3, 6]));
    executor.destroy();
  });
});
