import * as tf from '@tensorflow/tfjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../../lib/backend/backend_selection.js';
import { withShapeOnlyBackend } from '../../../lib/backend/shape_only/index.js';

/** The shape and dtype of each tensor, in order. */
function describeTensors(tensors: tf.Tensor[]): Array<{ shape: number[]; dtype: tf.DataType }> {
  return tensors.map((t) => ({ shape: t.shape, dtype: t.dtype }));
}

/** A model's gradients: parameters made from `shapes`, a loss of them, the gradients' shapes and the loss's. */
interface GradientCase {
  readonly name: string;
  readonly parameterShapes: number[][];
  readonly loss: (parameters: tf.Tensor[]) => tf.Scalar;
}

const convNet: GradientCase = {
  name: 'a small conv net with softmax cross-entropy',
  parameterShapes: [[8, 12, 12, 3], [3, 3, 3, 8], [8], [3, 3, 8, 16], [16], [144, 10], [10]],
  loss: ([x, f1, b1, f2, b2, w, b]) => {
    const labels = tf.oneHot(tf.tensor1d([0, 1, 2, 3, 4, 5, 6, 7], 'int32'), 10);
    let h = tf.relu(tf.conv2d(x as tf.Tensor4D, f1 as tf.Tensor4D, 1, 'same').add(b1!));
    h = tf.maxPool(h as tf.Tensor4D, 2, 2, 'valid');
    h = tf.fused.conv2d({ x: h as tf.Tensor4D, filter: f2 as tf.Tensor4D, strides: 2, pad: 'same', bias: b2, activation: 'relu' });
    h = tf.avgPool(h as tf.Tensor4D, 1, 1, 'valid').reshape([8, 144]);
    return tf.losses.softmaxCrossEntropy(labels, tf.matMul(h, w!).add(b!)) as tf.Scalar;
  },
};

const denseNet: GradientCase = {
  name: 'a dense net with softmax cross-entropy',
  parameterShapes: [[16, 32], [32, 64], [64], [64, 10], [10]],
  loss: ([x, w1, b1, w2, b2]) => {
    const labels = tf.oneHot(
      tf.tensor1d(
        Array.from({ length: 16 }, (_, i) => i % 10),
        'int32',
      ),
      10,
    );
    const h = tf.fused.matMul({ a: x!, b: w1!, bias: b1, activation: 'relu' });
    const logits = tf.matMul(tf.dropout(h, 0.1), w2!).add(b2!);
    return tf.losses.softmaxCrossEntropy(labels, logits).add(tf.mul(0.01, tf.sum(tf.square(w1!)))) as tf.Scalar;
  },
};

/** Layer normalization over the last axis. */
function layerNorm(x: tf.Tensor, gamma: tf.Tensor, beta: tf.Tensor): tf.Tensor {
  const { mean, variance } = tf.moments(x, -1, true);
  return x
    .sub(mean)
    .mul(tf.rsqrt(variance.add(1e-5)))
    .mul(gamma)
    .add(beta);
}

const attentionBlock: GradientCase = {
  name: 'a layer-norm and multi-head attention block',
  parameterShapes: [[2, 6, 16], [16], [16], [16, 48], [48], [16, 16], [16, 32], [32, 16]],
  loss: ([x, gamma, beta, wQkv, bQkv, wOut, w1, w2]) => {
    const [batch, length, width] = x!.shape as [number, number, number];
    const heads = 4;
    const headSize = width / heads;
    const normed = layerNorm(x!, gamma!, beta!);
    const qkv = tf
      .matMul(normed.reshape([batch * length, width]), wQkv!)
      .add(bQkv!)
      .reshape([batch, length, 3, heads, headSize]);
    const [q, k, v] = tf.unstack(tf.transpose(qkv, [2, 0, 3, 1, 4]));
    const scores = tf.matMul(q!, k!, false, true).div(Math.sqrt(headSize));
    const causal = tf.linalg.bandPart(tf.ones([length, length]), -1, 0);
    const weights = tf.softmax(tf.where(causal.cast('bool'), scores, tf.fill(scores.shape, -1e9)));
    const attended = tf.transpose(tf.matMul(weights, v!), [0, 2, 1, 3]).reshape([batch * length, width]);
    const h = x!.add(tf.matMul(attended, wOut!).reshape([batch, length, width]));
    const mlp = tf.matMul(tf.elu(tf.matMul(layerNorm(h, gamma!, beta!).reshape([batch * length, width]), w1!)), w2!);
    return h
      .add(mlp.reshape([batch, length, width]))
      .square()
      .mean() as tf.Scalar;
  },
};

/** The loss and its gradients with respect to every parameter, described, on the active backend. */
function gradientsOf(gradientCase: GradientCase): Array<{ shape: number[]; dtype: tf.DataType }> {
  return tf.tidy(() => {
    const parameters = gradientCase.parameterShapes.map((shape) => tf.randomNormal(shape));
    const { value, grads } = tf.valueAndGrads((...ps: tf.Tensor[]) => gradientCase.loss(ps))(parameters);
    return describeTensors([value, ...grads]);
  });
}

/** The gradients of trainable variables (`tf.variableGrads`), described, on the active backend. */
function variableGradientsOf(gradientCase: GradientCase): Array<{ shape: number[]; dtype: tf.DataType }> {
  const variables = gradientCase.parameterShapes.map((shape, i) => tf.variable(tf.randomNormal(shape), true, `${gradientCase.name} ${i}`));
  try {
    return tf.tidy(() => {
      const { value, grads } = tf.variableGrads(() => gradientCase.loss(variables), variables);
      return describeTensors([value, ...variables.map((v) => grads[v.name]!)]);
    });
  } finally {
    variables.forEach((v) => v.dispose());
  }
}

const CASES = [convNet, denseNet, attentionBlock];
let initialBackend = '';

beforeAll(async () => {
  initialBackend = await initBackend();
});

afterAll(async () => {
  await tf.setBackend(initialBackend);
});

describe('gradients on the shape-only backend', () => {
  it.each(CASES.map((c) => [c.name, c]))("of %s have the cpu backend's shapes and dtypes", async (_, gradientCase) => {
    await tf.setBackend('cpu');
    const onCpu = gradientsOf(gradientCase);
    const variablesOnCpu = variableGradientsOf(gradientCase);
    await tf.setBackend(initialBackend);
    const [onShapeOnly, variablesOnShapeOnly] = await withShapeOnlyBackend(() => [gradientsOf(gradientCase), variableGradientsOf(gradientCase)]);
    expect(onShapeOnly).toEqual(onCpu);
    expect(variablesOnShapeOnly).toEqual(variablesOnCpu);
    expect(onShapeOnly.slice(1).map((g) => g.shape)).toEqual(gradientCase.parameterShapes);
  });

  it('leave as many tensors behind as on the cpu backend', async () => {
    const leftBehind = (): number => {
      const before = tf.memory().numTensors;
      for (const gradientCase of CASES) {
        gradientsOf(gradientCase);
        variableGradientsOf(gradientCase);
      }
      return tf.memory().numTensors - before;
    };
    await tf.setBackend('cpu');
    const onCpu = leftBehind();
    await tf.setBackend(initialBackend);
    expect(await withShapeOnlyBackend(leftBehind)).toBe(onCpu);
  });
});
