/**
 * `ops.identityLoss` in a training model, as PopTorch's custom_loss_test.py
 * uses `poptorch.identity_loss`: intermediate losses are plain reductions
 * that can be returned as outputs, the final loss may be returned as an output
 * too, and two independent losses are an error. Numbers are computed by hand
 * for w = [1, 2]ᵀ, x = [[1, 1], [2, -1]], t = [1, 0]ᵀ: out = x·w = [3, 0]ᵀ,
 * d = out - t = [2, 0]ᵀ, and ∂Σd/∂w = Σ rows of x = [3, 0].
 */
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { ops, optim, trainingModel, type ModelOutput } from 'poptfjs';

const x = tf.tensor2d([
  [1, 1],
  [2, -1],
]);
const t = tf.tensor2d([[1], [0]]);

function weight(name: string): tf.Variable {
  return tf.variable(tf.tensor2d([[1], [2]]), true, name);
}

function values(output: ModelOutput): number[][] {
  return (Array.isArray(output) ? output : [output]).map((o) => Array.from(o.dataSync()));
}

async function oneStep(w: tf.Variable, lr: number, fn: (input: tf.Tensor, target: tf.Tensor) => tf.Tensor[]) {
  const executor = trainingModel(fn, { optimizer: new optim.SGD([w], { lr }) });
  const [output, loss] = await executor(x, t);
  return { output: values(output), loss: Array.from(loss.dataSync()), w: Array.from(w.dataSync()) };
}

describe('identityLoss in a training model', () => {
  // PopTorch's test_non_final_loss_reductions: partial = identity_loss(d, r), loss = identity_loss(5 partial², 'mean').
  it.each([
    // sum: partial = 2, loss = 20, ∂loss/∂w = 10 · 2 · [3, 0]
    ['sum' as const, [2], 20, [1 - 0.01 * 60, 2]],
    // mean: partial = 1, loss = 5, ∂loss/∂w = 10 · 1 · [3, 0] / 2
    ['mean' as const, [1], 5, [1 - 0.01 * 15, 2]],
    // none: partial = [2, 0], loss = (20 + 0) / 2, ∂loss/∂w = 5 · (2 · [1, 1] + 0 · [2, -1])
    ['none' as const, [2, 0], 10, [1 - 0.01 * 10, 2 - 0.01 * 10]],
  ])('an intermediate loss with reduction %s is a plain reduction returned as an output', async (reduction, partial, loss, trained) => {
    const w = weight(`intermediate_${reduction}_w`);
    const result = await oneStep(w, 0.01, (input, target) => {
      const out = tf.matMul(input, w);
      const partialLoss = ops.identityLoss(tf.sub(out, target), reduction);
      return [out, partialLoss, ops.identityLoss(tf.mul(tf.mul(partialLoss, partialLoss), 5), 'mean')];
    });
    expect(result.output).toEqual([[3, 0], partial]);
    expect(result.loss).toEqual([loss]);
    result.w.forEach((v, i) => expect(v).toBeCloseTo(trained[i]!, 6));
  });

  it('intermediate losses summed into the final loss train on their sum', async () => {
    const w = weight('summed_losses_w');
    // l1 = Σd = 2 (∂ = [3, 0]); l2 = mean(d²) = 2 (∂ = 2 · Σ dᵢ xᵢ / 2 = [2, 2]); loss = l1 + l2 = 4 (∂ = [5, 2]).
    const result = await oneStep(w, 0.1, (input, target) => {
      const d = tf.sub(tf.matMul(input, w), target);
      const l1 = ops.identityLoss(d, 'sum');
      const l2 = ops.identityLoss(tf.square(d), 'mean');
      return [l1, l2, ops.identityLoss(tf.add(l1, l2), 'sum')];
    });
    expect(result.output).toEqual([[2], [2]]);
    expect(result.loss).toEqual([4]);
    result.w.forEach((v, i) => expect(v).toBeCloseTo([1 - 0.5, 2 - 0.2][i]!, 6));
  });

  it('the final loss may also be returned as an output', async () => {
    const w = weight('loss_as_output_w');
    // loss = Σd² = 4, ∂ = 2 · Σ dᵢ xᵢ = [4, 4]
    const result = await oneStep(w, 0.1, (input, target) => {
      const out = tf.matMul(input, w);
      const loss = ops.identityLoss(tf.square(tf.sub(out, target)), 'sum');
      return [loss, out, loss];
    });
    expect(result.output).toEqual([[4], [3, 0]]);
    expect(result.loss).toEqual([4]);
    result.w.forEach((v, i) => expect(v).toBeCloseTo([1 - 0.4, 2 - 0.4][i]!, 6));
  });

  it('two independent losses are an error, as in PopTorch', async () => {
    const w = weight('independent_losses_w');
    function twoLosses(input: tf.Tensor, target: tf.Tensor): tf.Tensor[] {
      const d = tf.sub(tf.matMul(input, w), target);
      return [ops.identityLoss(d, 'sum'), ops.identityLoss(tf.square(d), 'mean')];
    }
    const executor = trainingModel(twoLosses, { optimizer: new optim.SGD([w], { lr: 0.1 }) });
    await expect(executor(x, t)).rejects.toThrow(
      "trainingModel: model 'twoLosses' has 2 independent losses made by ops.identityLoss; a model must have one final loss: " +
        'wrap the final loss in ops.identityLoss (e.g. ops.identityLoss(tf.add(loss1, loss2), "sum"))',
    );
  });
});
