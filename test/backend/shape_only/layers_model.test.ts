import * as tf from '@tensorflow/tfjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../../lib/backend/backend_selection.js';
import { ShapeOnlyError, withShapeOnlyBackend } from '../../../lib/backend/shape_only/index.js';

const VOCABULARY = 50;
const LENGTH = 8;
const WIDTH = 12;
const CLASSES = 5;
const BATCH = 4;

/** A model using embedding, layer normalization, conv2d, batch normalization, pooling, dropout and dense layers. */
function buildModel(): tf.Sequential {
  return tf.sequential({
    layers: [
      tf.layers.embedding({ inputDim: VOCABULARY, outputDim: WIDTH, inputLength: LENGTH }),
      tf.layers.layerNormalization(),
      tf.layers.dense({ units: WIDTH, activation: 'relu' }),
      tf.layers.reshape({ targetShape: [LENGTH, WIDTH, 1] }),
      tf.layers.conv2d({ filters: 3, kernelSize: 3, padding: 'same', activation: 'relu' }),
      tf.layers.batchNormalization(),
      tf.layers.maxPooling2d({ poolSize: 2 }),
      tf.layers.flatten(),
      tf.layers.dropout({ rate: 0.3 }),
      tf.layers.dense({ units: CLASSES, activation: 'softmax' }),
    ],
  });
}

/** The parameters of {@link buildModel}, by hand. */
const EXPECTED_PARAMETERS =
  VOCABULARY * WIDTH + // embedding
  2 * WIDTH + // layer normalization: gamma, beta
  WIDTH * WIDTH +
  WIDTH + // dense
  3 * 3 * 1 * 3 +
  3 + // conv2d
  4 * 3 + // batch normalization: gamma, beta, moving mean, moving variance
  (LENGTH / 2) * (WIDTH / 2) * 3 * CLASSES +
  CLASSES; // dense

function tokens(): tf.Tensor {
  return tf.tensor2d(
    Array.from({ length: BATCH }, (_, b) => Array.from({ length: LENGTH }, (_, i) => (b * 7 + i) % VOCABULARY)),
    undefined,
    'int32',
  );
}

function labels(): tf.Tensor {
  return tf.oneHot(tf.tensor1d([0, 1, 2, 3], 'int32'), CLASSES);
}

let initialBackend = '';

beforeAll(async () => {
  initialBackend = await initBackend();
});

afterAll(async () => {
  await tf.setBackend(initialBackend);
});

describe('a tf.layers model built on the shape-only backend', () => {
  it('counts its parameters and predicts the shapes the cpu backend gives', async () => {
    await tf.setBackend('cpu');
    const onCpu = buildModel();
    const cpuPrediction = onCpu.predict(tokens()) as tf.Tensor;
    await tf.setBackend(initialBackend);
    const { parameters, prediction, weightShapes } = await withShapeOnlyBackend(() => {
      const model = buildModel();
      const output = model.predict(tokens()) as tf.Tensor;
      return { parameters: model.countParams(), prediction: { shape: output.shape, dtype: output.dtype }, weightShapes: model.weights.map((w) => w.shape) };
    });
    expect(parameters).toBe(EXPECTED_PARAMETERS);
    expect(onCpu.countParams()).toBe(EXPECTED_PARAMETERS);
    expect(prediction).toEqual({ shape: cpuPrediction.shape, dtype: cpuPrediction.dtype });
    expect(prediction.shape).toEqual([BATCH, CLASSES]);
    expect(weightShapes).toEqual(onCpu.weights.map((w) => w.shape));
  });

  it('takes training steps: forward in training mode (dropout, batch statistics), backward, Adam update', async () => {
    const { loss, shapesBefore, shapesAfter } = await withShapeOnlyBackend(() => {
      const model = buildModel();
      const optimizer = tf.train.adam(1e-3);
      const x = tokens();
      const y = labels();
      const shapesBefore = model.trainableWeights.map((w) => w.shape);
      let loss: tf.Scalar | null = null;
      for (let step = 0; step < 2; step++) {
        loss = optimizer.minimize(() => tf.losses.softmaxCrossEntropy(y, model.apply(x, { training: true }) as tf.Tensor) as tf.Scalar, true);
      }
      return { loss: { shape: loss!.shape, dtype: loss!.dtype }, shapesBefore, shapesAfter: model.trainableWeights.map((w) => w.read().shape) };
    });
    expect(loss).toEqual({ shape: [], dtype: 'float32' });
    expect(shapesAfter).toEqual(shapesBefore);
  });

  it('cannot fit: model.fit and trainOnBatch read the loss on the host', async () => {
    await withShapeOnlyBackend(async () => {
      const model = buildModel();
      model.compile({ optimizer: 'sgd', loss: 'categoricalCrossentropy' });
      await expect(model.trainOnBatch(tokens(), labels())).rejects.toThrow(ShapeOnlyError);
      await expect(model.fit(tokens(), labels(), { epochs: 1, verbose: 0 })).rejects.toThrow(/planning with shapes only.*made by kernel/);
    });
  });
});
