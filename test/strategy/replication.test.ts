import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { CommGroupType, Options, OutputMode, PoptfjsError, VariableRetrievalMode, inferenceModel, ops, optim, trainingModel } from 'poptfjs';
import { replicaGroups } from '../../lib/executable/replica_grouping.js';
import { expectClose } from '../helpers.js';
import { runProgram } from '../run_program.js';

describe('replica groups', () => {
  it('arranges replicas as PopTorch: consecutive, orthogonal, all, none', () => {
    expect(replicaGroups('Consecutive', 2, 8)).toEqual([
      [0, 1],
      [2, 3],
      [4, 5],
      [6, 7],
    ]);
    expect(replicaGroups('Orthogonal', 2, 8)).toEqual([
      [0, 4],
      [1, 5],
      [2, 6],
      [3, 7],
    ]);
    expect(replicaGroups('All', 2, 4)).toEqual([[0, 1, 2, 3]]);
    expect(replicaGroups('NoGrouping', 2, 3)).toEqual([[0], [1], [2]]);
    expect(() => replicaGroups('Consecutive', 3, 8)).toThrow('replica groups of 3 do not divide 8 replica(s)');
  });
});

/** The seed's problem: X [24, 40] split 2 ways by input groups, W [4, 40, 14] split 4 ways in orthogonal groups of 2. */
function problem() {
  const X = tf.randomNormal([24, 40], 0, 1, 'float32', 7);
  const W0 = tf.mul(tf.randomNormal([4, 40, 14], 0, 1, 'float32', 8), 0.15);
  return { X, W0 };
}

describe('replicaGrouping (the seed example)', () => {
  it('trains each weight slice on its group of replicas, as computed by hand', async () => {
    const { X, W0 } = problem();
    const W = tf.variable(W0.clone(), true, 'grouped_W');
    const model = (x: tf.Tensor) => {
      const z = tf.matMul(x, W);
      return [z, ops.identityLoss(tf.square(z), 'mean')];
    };
    const opts = new Options().replicationFactor(8).inputReplicaGrouping(4, CommGroupType.Consecutive).outputMode(OutputMode.All);
    const executor = trainingModel(model, { options: opts, optimizer: new optim.SGD([W], { lr: 0.01 }) });
    executor.parameter('grouped_W').replicaGrouping(CommGroupType.Orthogonal, 2, VariableRetrievalMode.OnePerGroup);

    // By hand: replica r sees input part floor(r / 4) and weight slice r % 4; each slice moves by
    // the sum of its two replicas' gradients over the 8 replicas (PopTorch's Mean reduction).
    const parts = [X.slice([0], [12]), X.slice([12], [12])];
    let slices = [0, 1, 2, 3].map((k) => W0.slice([k], [1]).squeeze([0]));
    for (let step = 0; step < 4; step++) {
      const [out, loss] = await executor(X);
      const replicaLoss = (r: number) => tf.mean(tf.square(tf.matMul(parts[Math.floor(r / 4)]!, slices[r % 4]!)));
      const expectedLosses = tf.stack([0, 1, 2, 3, 4, 5, 6, 7].map(replicaLoss));
      expectClose(loss, expectedLosses, 1e-5, 1e-6);
      expect((out as tf.Tensor).shape).toEqual([8 * 12, 14]);
      slices = slices.map((s, k) => {
        const grads = [k, k + 4].map((r) => tf.grad((w: tf.Tensor) => tf.mean(tf.square(tf.matMul(parts[Math.floor(r / 4)]!, w))))(s));
        return tf.sub(s, tf.mul(tf.div(tf.addN(grads), 8), 0.01));
      });
    }
    executor.copyWeightsToHost();
    expect(W.shape).toEqual([4, 40, 14]);
    expectClose(W, tf.stack(slices), 1e-5, 1e-6);

    // PopTorch's own check: the slices end where the whole weight ends when trained on the whole batch.
    let whole = tf.reshape(tf.transpose(W0, [1, 0, 2]), [40, 56]);
    for (let step = 0; step < 4; step++) {
      whole = tf.sub(whole, tf.mul(tf.grad((w: tf.Tensor) => tf.mean(tf.square(tf.matMul(X, w))))(whole), 0.01));
    }
    expectClose(tf.reshape(tf.transpose(W, [1, 0, 2]), [40, 56]), whole, 1e-5, 1e-6);
  });

  it('returns one value per replica with AllReplicas; replicas of a group hold the same slice', async () => {
    const { X, W0 } = problem();
    const perReplica = tf.stack([0, 1, 2, 3, 4, 5, 6, 7].map((r) => W0.slice([r % 4], [1]).squeeze([0])));
    const W = tf.variable(perReplica, true, 'all_replicas_W');
    const model = (x: tf.Tensor) => {
      const z = tf.matMul(x, W);
      return [z, ops.identityLoss(tf.square(z), 'mean')];
    };
    const opts = new Options().replicationFactor(8).inputReplicaGrouping(4, CommGroupType.Consecutive);
    const executor = trainingModel(model, { options: opts, optimizer: new optim.SGD([W], { lr: 0.1 }) });
    executor.parameter('all_replicas_W').replicaGrouping(CommGroupType.Orthogonal, 2, VariableRetrievalMode.AllReplicas);
    await executor(X);
    executor.copyWeightsToHost();
    expect(W.shape).toEqual([8, 40, 14]);
    const slice = (r: number) => W.slice([r], [1]);
    expectClose(slice(0), slice(4));
    expectClose(slice(3), slice(7));
    expect(tf.max(tf.abs(tf.sub(slice(0), slice(1)))).dataSync()[0]).toBeGreaterThan(1e-3);
  });

  it('checks the number of slices against the groups', async () => {
    const W = tf.variable(tf.zeros([3, 4, 2]), true, 'badly_sliced_W');
    const model = (x: tf.Tensor) => [tf.matMul(x, W), ops.identityLoss(tf.sum(tf.matMul(x, W)), 'sum')];
    const executor = trainingModel(model, { options: new Options().replicationFactor(4) });
    executor.parameter('badly_sliced_W').replicaGrouping(CommGroupType.Consecutive, 2);
    await expect(executor(tf.ones([4, 4]))).rejects.toThrow(
      "parameter 'badly_sliced_W' has 3 slice(s) along its first dimension, but replicaGrouping(Consecutive, 2, OnePerGroup) over 4 replicas needs 2 (one per group)",
    );
    expect(() => executor.parameter('no_such_weight')).toThrow("the model has no weight called 'no_such_weight'");
  });

  it('runs as examples/replica-grouping.ts', () => {
    const { status, stdout, stderr } = runProgram('examples/replica-grouping.ts');
    expect(stderr).toBe('');
    expect(status).toBe(0);
    const losses = stdout
      .match(/^losses: (.*)$/m)![1]!
      .split(' ')
      .map(Number);
    expect(losses).toHaveLength(4);
    expect(losses[3]!).toBeLessThan(losses[0]!);
    expect(stdout).toMatch(/W slices on the host: \[4, 40, 14\]; final W: \[40, 56\]/);
  });
});

describe('buffers', () => {
  /** A model that adds the sum of its input to a buffer and returns the buffer. */
  function accumulatorModel(name: string) {
    const total = tf.variable(tf.zeros([1]), false, name);
    return (x: tf.Tensor) => {
      total.assign(tf.add(total, tf.sum(x)));
      return tf.add(tf.mul(x, 0), total);
    };
  }

  it('keep the values the model writes across runs (the counter returns 1, then 2)', async () => {
    const executor = inferenceModel(accumulatorModel('buffer_counter'));
    expect(Array.from(((await executor(tf.ones([1]))) as tf.Tensor).dataSync())).toEqual([1]);
    expect(Array.from(((await executor(tf.ones([1]))) as tf.Tensor).dataSync())).toEqual([2]);
  });

  // PopTorch's tests/buffers_test.py: test_failing_on_replicas, test_constant_buffer_with_replicas, test_unsynchronised_replicated_buffers.
  it('written with replicas are refused while broadcastBuffers is on (the default), as PopTorch refuses them', async () => {
    const shared = inferenceModel(accumulatorModel('broadcast_total'), { options: new Options().replicationFactor(2) });
    const error = await shared(tf.tensor2d([[1], [10]])).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PoptfjsError);
    expect((error as Error).message).toBe(
      "poptfjs does not support broadcasting buffers (the model writes 'broadcast_total' on 2 replicas). If your model is able to tolerate buffers becoming out of sync between replicas, you can disable buffer broadcasting using Options.broadcastBuffers(false).",
    );
    shared.destroy();
  });

  it('only read run with replicas whatever broadcastBuffers says', async () => {
    const stuff = tf.variable(tf.tensor1d([1, 2, 3]), false, 'constant_stuff');
    const executor = inferenceModel((x: tf.Tensor) => tf.sum(tf.add(x, tf.add(stuff, 1)), 1), { options: new Options().replicationFactor(2) });
    const x = tf.tensor2d([2, 2, 2, 0, 0, 0], [2, 3]);
    expect(Array.from(((await executor(x)) as tf.Tensor).dataSync())).toEqual([15, 9]);
    executor.destroy();
  });

  it('are kept per replica with broadcastBuffers(false)', async () => {
    // Replica 0 adds 1 per call, replica 1 adds 10.
    const x = tf.tensor2d([[1], [10]]);
    const separate = inferenceModel(accumulatorModel('own_total'), { options: new Options().replicationFactor(2).broadcastBuffers(false) });
    expect(Array.from(((await separate(x)) as tf.Tensor).dataSync())).toEqual([1, 10]);
    expect(Array.from(((await separate(x)) as tf.Tensor).dataSync())).toEqual([2, 20]);
    separate.destroy();
  });
});
