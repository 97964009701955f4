/**
 * RMSprop's `alpha` is any number >= 0, not capped at 1: torch.optim.RMSprop
 * checks only `0 <= alpha`, and PopTorch's tests/optimizers_test.py
 * (test_variable_default, "Check the values can actually change") trains
 * with alpha = 0.99 + 0.5. The steps are checked against the update worked
 * out here in float64.
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { optim, trainingModel } from 'poptfjs';
import { expectClose } from '../helpers.js';

const X = [
  [0.5, -1, 2],
  [1.5, 0.25, -0.5],
  [-1, 1, 1],
  [0.75, -0.25, 0.5],
];
const Y = [[1], [-0.5], [0.25], [2]];
const W0 = [[0.2], [-0.4], [0.1]];

/** The gradient of the mean squared error of `X·w` against `Y`, in float64. */
function gradient(w: number[]): number[] {
  const n = X.length;
  const g = [0, 0, 0];
  X.forEach((row, i) => {
    const residual = row.reduce((s, v, j) => s + v * w[j]!, 0) - Y[i]![0]!;
    row.forEach((v, j) => (g[j]! += (2 / n) * v * residual));
  });
  return g;
}

/** TensorFlow's variant of RMSprop (square average from one, eps inside the root), `steps` steps with the `alpha` of each. */
function reference(alphas: number[], lr: number, eps: number): number[] {
  const w = W0.map((r) => r[0]!);
  const square = [1, 1, 1];
  for (const alpha of alphas) {
    const g = gradient(w);
    for (let j = 0; j < 3; j++) {
      square[j] = alpha * square[j]! + (1 - alpha) * g[j]! ** 2;
      w[j]! -= (lr * g[j]!) / Math.sqrt(square[j]! + eps);
    }
  }
  return w;
}

describe('RMSprop alpha', () => {
  it('above 1 is accepted, trains with that value, and changes with setOptimizer when it was given to the constructor', async () => {
    const model = tf.sequential({ layers: [tf.layers.dense({ units: 1, inputShape: [3], useBias: false })] });
    model.setWeights([tf.tensor(W0)]);
    const opt = new optim.RMSprop(model, { lr: 0.05, alpha: 1.49, eps: 1e-8, useTfVariant: true });
    expect(opt.alpha).toBe(1.49);
    const executor = trainingModel(model, { loss: 'meanSquaredError', optimizer: opt });
    const x = tf.tensor(X);
    const y = tf.tensor(Y);
    tf.dispose(await executor.run(x, y));
    tf.dispose(await executor.run(x, y));
    opt.alpha = 1.2;
    executor.setOptimizer(opt);
    tf.dispose(await executor.run(x, y));
    executor.copyWeightsToHost();
    expectClose(model.getWeights()[0]!, tf.tensor([reference([1.49, 1.49, 1.2], 0.05, 1e-8)]).transpose(), 1e-5, 1e-6);
    executor.destroy();
  });

  it('below 0 is refused, as torch refuses it', () => {
    const model = tf.sequential({ layers: [tf.layers.dense({ units: 1, inputShape: [3] })] });
    expect(() => new optim.RMSprop(model, { alpha: -0.1 })).toThrow(/optim.RMSprop: alpha = -0.1 is invalid: Too small: expected number to be >=0/);
  });
});
