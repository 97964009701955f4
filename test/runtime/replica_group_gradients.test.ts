import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { CommGroupType, MeanReductionStrategy, Options, ReductionType, ops, optim, trainingModel } from 'poptfjs';
import { meanDivisor } from '../../lib/runtime/gradient_mean.js';
import { expectClose } from '../helpers.js';

/**
 * A weight of four scalar slices over 8 replicas; replica r computes the loss
 * x_r · w (its micro-batch is the single value x_r = r + 1), so the gradient it
 * sends for its slice is x_r. PopTorch's Mean reduction divides the sum over
 * a slice's group by the replication factor (8), not by the group's size.
 */
async function trainedSlices(name: string, type: CommGroupType, slices: number, options: Options = new Options()): Promise<number[]> {
  const W = tf.variable(tf.zeros([slices, 1]), true, name);
  const model = (x: tf.Tensor) => ops.identityLoss(tf.sum(tf.mul(x, W)), 'sum');
  const executor = trainingModel(model, { options: options.replicationFactor(8), optimizer: new optim.SGD([W], { lr: 0.8 }) });
  executor.parameter(name).replicaGrouping(type, 2);
  await executor(tf.tensor2d([1, 2, 3, 4, 5, 6, 7, 8], [8, 1]));
  executor.copyWeightsToHost();
  const values = Array.from(W.dataSync());
  executor.destroy();
  return values;
}

describe('the gradient of a weight split across replica groups', () => {
  it('is the sum over its group divided by the replication factor (orthogonal groups of 2 among 8)', async () => {
    // Group k holds replicas k and k + 4: w_k = -0.8 · ((k + 1) + (k + 5)) / 8.
    const w = await trainedSlices('orthogonal_grads', CommGroupType.Orthogonal, 4);
    expectClose(tf.tensor(w), tf.tensor([-0.6, -0.8, -1.0, -1.2]));
  });

  it('is the same with consecutive groups, and with a running mean', async () => {
    // Groups [0,1], [2,3], [4,5], [6,7]: sums 3, 7, 11, 15, times -0.8 / 8.
    const expected = tf.tensor([-0.3, -0.7, -1.1, -1.5]);
    expectClose(tf.tensor(await trainedSlices('consecutive_grads', CommGroupType.Consecutive, 4)), expected);
    const running = new Options();
    running.Training.setMeanAccumulationAndReplicationReductionStrategy(MeanReductionStrategy.Running);
    expectClose(tf.tensor(await trainedSlices('running_grads', CommGroupType.Consecutive, 4, running)), expected);
  });

  it('is the plain group sum under a Sum reduction', async () => {
    const sum = new Options();
    sum.Training.accumulationAndReplicationReductionType(ReductionType.Sum);
    expectClose(tf.tensor(await trainedSlices('summed_grads', CommGroupType.Orthogonal, 4, sum)), tf.tensor([-4.8, -6.4, -8.0, -9.6]));
  });

  it('matches an ungrouped weight when the group is every replica', async () => {
    // One group of all 8: -0.8 · 36 / 8.
    expectClose(tf.tensor(await trainedSlices('all_grads', CommGroupType.All, 1)), tf.tensor([-3.6]));
  });

  it('divides over accumulated micro-batches as well', () => {
    const post = { type: 'Mean', strategy: 'Post' } as const;
    expect(meanDivisor(post, 2 * 3, 2, 8)).toBe(8 * 3);
    expect(meanDivisor({ type: 'Mean', strategy: 'Running' }, 2 * 3, 2, 8)).toBe(4);
    expect(meanDivisor({ type: 'Sum', strategy: 'Post' }, 6, 2, 8)).toBe(1);
    expect(meanDivisor(post, 8 * 3, 8, 8)).toBe(8 * 3);
  });
});
