import { describe, expect, it } from 'vitest';
import { canonicalLossName, LOSS_ALIASES, LOSS_NAMES, tf, trainingModel } from 'poptfjs';

/** One training step of a 2 → 2 dense layer with weights of ones and no bias, on one sample; its loss. */
async function firstLoss(loss: string): Promise<number> {
  const model = tf.sequential({ layers: [tf.layers.dense({ units: 2, inputShape: [2], useBias: false, kernelInitializer: 'ones' })] });
  const training = trainingModel(model, { loss });
  const [output, value] = await training(tf.tensor2d([[1, 2]]), tf.tensor2d([[1, 5]]));
  const result = (await value.data())[0]!;
  tf.dispose([output as tf.Tensor, value]);
  training.destroy();
  return result;
}

describe("tfjs's and Keras's short loss names", () => {
  it('name the tfjs losses, in any case and with underscores', () => {
    expect(LOSS_ALIASES).toEqual({
      mse: 'meanSquaredError',
      mae: 'meanAbsoluteError',
      mape: 'meanAbsolutePercentageError',
      msle: 'meanSquaredLogarithmicError',
      kld: 'kullbackLeiblerDivergence',
      cosine: 'cosineProximity',
    });
    expect(canonicalLossName('MSE')).toBe('meanSquaredError');
    expect(canonicalLossName('mean_absolute_error')).toBe('meanAbsoluteError');
    expect(canonicalLossName('categoricalcrossentropy')).toBe('categoricalCrossentropy');
    for (const name of LOSS_NAMES) expect(canonicalLossName(name)).toBe(name);
    expect(canonicalLossName('msqe')).toBeUndefined();
  });

  it('train with the loss they name: the output [3, 3] against the target [1, 5]', async () => {
    // Squared errors 4 and 4, absolute errors 2 and 2, percentage errors 200% and 40%.
    expect(await firstLoss('mse')).toBeCloseTo(4, 5);
    expect(await firstLoss('MAE')).toBeCloseTo(2, 5);
    expect(await firstLoss('mape')).toBeCloseTo(120, 3);
    expect(await firstLoss('mean_squared_error')).toBeCloseTo(4, 5);
  });

  it('refuse a name that is none of them, listing the names and the short ones', () => {
    const model = tf.sequential({ layers: [tf.layers.dense({ units: 2, inputShape: [2] })] });
    const training = trainingModel(model, { loss: 'msqe' });
    return expect(training(tf.ones([1, 2]), tf.ones([1, 2]))).rejects.toThrow(
      /unknown loss 'msqe'; expected a function \(yTrue, yPred\) => tf\.Tensor or one of: meanSquaredError, .*, cosineProximity, or mse, mae, mape, msle, kld, cosine/,
    );
  });
});
