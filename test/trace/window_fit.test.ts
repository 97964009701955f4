/**
 * A convolution or pooling whose window is larger than its padded input: tfjs
 * makes an output with no elements; poptfjs refuses the layer when it is
 * traced (as PyTorch refuses it), for plan() with shapes only and for a
 * model compiled with values alike, naming the layer and the shapes.
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { inferenceModel, plan } from 'poptfjs';

const conv = () => tf.sequential({ layers: [tf.layers.conv2d({ filters: 4, kernelSize: 9, inputShape: [8, 8, 3], name: 'conv' })] });

describe('a window larger than its input', () => {
  it('is refused by plan() with shapes only, naming the layer, the window and the shapes', async () => {
    await expect(plan(conv, { inputs: [{ shape: [2, 8, 8, 3] }] })).rejects.toThrow(
      "layer 'conv': FusedConv2D makes an output of shape [2,0,0,4], with no elements, from an input of shape [2,8,8,3]: " +
        "its window (9×9, padding 'valid') is larger than the padded input; a convolution or pooling window must fit in its input",
    );
    const pool = () => tf.sequential({ layers: [tf.layers.maxPooling2d({ poolSize: [5, 3], inputShape: [4, 4, 2], name: 'pool' })] });
    await expect(plan(pool, { inputs: [{ shape: [1, 4, 4, 2] }] })).rejects.toThrow(
      "layer 'pool': MaxPool makes an output of shape [1,0,1,2], with no elements, from an input of shape [1,4,4,2]: its window (5×3, padding 'valid')",
    );
  });

  it('is refused when a model is compiled, before the kernel runs, leaving no tensor behind; padding that makes room is taken', async () => {
    const filter = tf.ones([9, 9, 3, 4]) as tf.Tensor4D;
    const fn = inferenceModel((x: tf.Tensor) => tf.conv2d(x as tf.Tensor4D, filter, 1, 'valid'));
    await expect(fn.compile(tf.ones([2, 8, 8, 3]))).rejects.toThrow(
      "Conv2D makes an output of shape [2,0,0,4], with no elements, from an input of shape [2,8,8,3]: its window (9×9, padding 'valid')",
    );
    const model = conv();
    const executor = inferenceModel(model);
    const x = tf.ones([2, 8, 8, 3]);
    const before = tf.memory().numTensors;
    await expect(executor.compile(x)).rejects.toThrow("layer 'conv': FusedConv2D makes an output of shape [2,0,0,4]");
    expect(tf.memory().numTensors).toBe(before);
    const same = tf.sequential({ layers: [tf.layers.conv2d({ filters: 4, kernelSize: 9, padding: 'same', inputShape: [8, 8, 3], name: 'same' })] });
    const padded = inferenceModel(same);
    const out = (await padded.run(x)) as tf.Tensor;
    expect(out.shape).toEqual([2, 8, 8, 4]);
    expect(Array.from(await out.data())).toEqual(Array.from(await (same.predict(x) as tf.Tensor).data()));
  });
});
